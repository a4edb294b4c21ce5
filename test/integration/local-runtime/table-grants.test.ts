/**
 * Locally, a function's DynamoDB call that its AWS grant (infra/shared/table-grants.ts) does not cover fails as IAM would
 * fail it (infra/local/lambda/table-grants.ts), against the integration run's DynamoDB Local; calls outside any invocation
 * (a test's setup) are not checked.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { DescribeTableCommand, DynamoDBClient, GetItemCommand, PutItemCommand, QueryCommand, TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { invokeFunction } from '../../../infra/local/lambda/adapter';
import { enforceTableGrants } from '../../../infra/local/lambda/table-grants';
import { actionsOfRequest } from '../../../infra/shared/table-grants';
import { config } from '../../../lib/config';
import { tableName } from '../../../lib/store/dynamo';
import { TestApi } from '../../support/api';

const client = new DynamoDBClient({ endpoint: config.DYNAMODB_ENDPOINT, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
enforceTableGrants(client);
afterAll(() => client.destroy());

/** `send` run inside an invocation of function `name`, as the local runtime invokes it. */
const asFunction = <T>(name: string, send: () => Promise<T>) => invokeFunction(send, {}, name, 5_000);

const key = () => ({ pk: { S: `TEST#${randomUUID()}` }, sk: { S: 'GRANT' } });
const getItem = () => client.send(new GetItemCommand({ TableName: tableName, Key: key() }));
const putItem = () => client.send(new PutItemCommand({ TableName: tableName, Item: key() }));
const denied = (action: string) => expect.objectContaining({ name: 'AccessDeniedException', message: expect.stringContaining(`dynamodb:${action}`) });

describe('the local table grants', () => {
  it('refuses the public health function any item read: its grant is DescribeTable only', async () => {
    await expect(asFunction('health', getItem)).rejects.toEqual(denied('GetItem'));
    await expect(asFunction('health', () => client.send(new DescribeTableCommand({ TableName: tableName })))).resolves.toMatchObject({ Table: { TableName: tableName } });
  });

  it('lets a read function read but not write', async () => {
    await expect(asFunction('transactions-get', getItem)).resolves.toBeDefined();
    await expect(asFunction('transactions-get', putItem)).rejects.toEqual(denied('PutItem'));
  });

  it('checks each item of a transaction: the processor webhook may put and condition-check, never delete', async () => {
    const put = { Put: { TableName: tableName, Item: key() } };
    const check = { ConditionCheck: { TableName: tableName, Key: key(), ConditionExpression: 'attribute_not_exists(pk)' } };
    const remove = { Delete: { TableName: tableName, Key: key() } };

    await expect(asFunction('processor-webhook', () => client.send(new TransactWriteItemsCommand({ TransactItems: [put, check] })))).resolves.toBeDefined();
    await expect(asFunction('processor-webhook', () => client.send(new TransactWriteItemsCommand({ TransactItems: [put, remove] })))).rejects.toEqual(denied('DeleteItem'));
  });

  it('holds a function limited to some indexes to them: the outbox sweep queries gsi7 and gsi2, never the table or another index', async () => {
    const query = (IndexName?: string) => () =>
      client.send(
        new QueryCommand({
          TableName: tableName,
          ...(IndexName === undefined ? {} : { IndexName }),
          KeyConditionExpression: `${IndexName ?? ''}pk = :pk`,
          ExpressionAttributeValues: { ':pk': { S: 'NOTHING' } },
        }),
      );

    await expect(asFunction('outbox-sweep', query('gsi7'))).resolves.toMatchObject({ Count: 0 });
    await expect(asFunction('outbox-sweep', query('gsi2'))).resolves.toMatchObject({ Count: 0 });
    await expect(asFunction('outbox-sweep', query('gsi4'))).rejects.toEqual(denied('Query'));
    await expect(asFunction('outbox-sweep', query('gsi1'))).rejects.toEqual(denied('Query'));
    await expect(asFunction('outbox-sweep', query())).rejects.toEqual(denied('Query'));
    await expect(asFunction('transactions-list', query('gsi1'))).resolves.toMatchObject({ Count: 0 });
  });

  it('refuses a function with no declared grant anything, and checks nothing outside an invocation', async () => {
    await expect(asFunction('no-such-function', getItem)).rejects.toEqual(denied('GetItem'));
    await expect(asFunction('not-found', getItem)).rejects.toEqual(denied('GetItem'));
    await expect(getItem()).resolves.toBeDefined();
  });

  it('installs itself once per client', () => {
    enforceTableGrants(client);
    expect(client.middlewareStack.identify().filter((entry) => entry.startsWith('localTableGrants '))).toHaveLength(1);
  });

  it('holds the service’s own table client to the grants once the local API has loaded a function', async () => {
    const api = await TestApi.start();
    try {
      expect((await api.request('GET', '/health')).status).toBe(200);
      const { documentClient, dynamoClient } = await import('../../../lib/store/dynamo');
      expect(dynamoClient.middlewareStack.identify().filter((entry) => entry.startsWith('localTableGrants '))).toHaveLength(1);
      // The service's document client (a `Get` is a GetItem to IAM) is refused in the health function's invocation.
      const get = () => documentClient.send(new GetCommand({ TableName: tableName, Key: { pk: 'TEST#grant', sk: 'GRANT' } }));
      await expect(asFunction('health', get)).rejects.toEqual(denied('GetItem'));
      await expect(asFunction('transactions-get', get)).resolves.toBeDefined();
    } finally {
      await api.close();
    }
  });
});

describe('the IAM actions of a request', () => {
  it('names a single-item or batch request by its operation, and a transaction by its items', () => {
    expect(actionsOfRequest('GetItemCommand', {})).toEqual(['GetItem']);
    expect(actionsOfRequest('BatchGetItemCommand', {})).toEqual(['BatchGetItem']);
    expect(actionsOfRequest('QueryCommand', {})).toEqual(['Query']);
    expect(actionsOfRequest('TransactGetItemsCommand', { TransactItems: [{ Get: {} }] })).toEqual(['GetItem']);
    expect(actionsOfRequest('TransactWriteItemsCommand', { TransactItems: [{ Put: {} }, { Update: {} }, { Put: {} }, { ConditionCheck: {} }, { Delete: {} }] })).toEqual([
      'PutItem',
      'UpdateItem',
      'ConditionCheckItem',
      'DeleteItem',
    ]);
  });
});
