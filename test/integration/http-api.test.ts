import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DescribeTableCommand, DescribeTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { startHttpApi, type HttpApi } from '../../infra/local/http-api';
import { dynamoClient, tableName } from '../../lib/store/dynamo';
import { ensureTable, GLOBAL_INDEXES } from '../../lib/store/table';

describe('the local HTTP API', () => {
  let api: HttpApi;
  beforeAll(async () => {
    api = await startHttpApi({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await api.close();
  });

  it('answers GET /api/v1/health with 200 {status: ok}', async () => {
    const response = await fetch(`${api.url}/api/v1/health`);

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  it('answers an unknown route with 404 NOT_FOUND JSON', async () => {
    const response = await fetch(`${api.url}/api/v1/no/such/route`, { method: 'POST', body: '{not json' });

    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: 'No route matches this path', code: 'NOT_FOUND' });
  });

  it('answers a path outside /api/v1 with 404 too', async () => {
    const response = await fetch(`${api.url}/health`);

    expect(response.status).toBe(404);
    expect(((await response.json()) as { code: string }).code).toBe('NOT_FOUND');
  });

  it('answers a known path under another method with 405 METHOD_NOT_ALLOWED', async () => {
    const response = await fetch(`${api.url}/api/v1/health`, { method: 'DELETE' });

    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET');
    expect(((await response.json()) as { code: string }).code).toBe('METHOD_NOT_ALLOWED');
  });
});

describe('the table in DynamoDB Local', () => {
  it('has every index of the single-table design and TTL on expiresAt', async () => {
    const { Table } = await dynamoClient.send(new DescribeTableCommand({ TableName: tableName }));
    const ttl = await dynamoClient.send(new DescribeTimeToLiveCommand({ TableName: tableName }));

    expect(Table?.KeySchema).toEqual([
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ]);
    expect(Table?.GlobalSecondaryIndexes?.map((index) => index.IndexName).sort()).toEqual(
      GLOBAL_INDEXES.map((index) => index.indexName).sort(),
    );
    expect(ttl.TimeToLiveDescription?.AttributeName).toBe('expiresAt');
  });

  it('is created only once: ensureTable on an existing table changes nothing', async () => {
    expect(await ensureTable(dynamoClient, tableName)).toBe('existed');
  });
});
