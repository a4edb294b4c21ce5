/**
 * The capacity log (infra/local/lambda/capacity-log.ts), what the capacity model (`npm run bench -- capacity`) reads:
 * each call a function makes is logged with the partitions it touched on the table and on each index, and the units
 * DynamoDB Local reported for them, against the integration run's DynamoDB Local.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { invokeFunction } from '../../../infra/local/lambda/adapter';
import { type CapacityRecord, recordCapacity } from '../../../infra/local/lambda/capacity-log';
import { config } from '../../../lib/config';
import { tableName } from '../../../lib/store/dynamo';

const dir = mkdtempSync(join(tmpdir(), 'capacity-log-'));
const file = join(dir, 'capacity.jsonl');
const client = new DynamoDBClient({ endpoint: config.DYNAMODB_ENDPOINT, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
recordCapacity(client, file);
const db = DynamoDBDocumentClient.from(client);
afterAll(() => {
  client.destroy();
  rmSync(dir, { recursive: true, force: true });
});

/** The lines `send`, run as function `fn`, added to the log. */
async function logged(fn: string, send: () => Promise<unknown>): Promise<CapacityRecord[]> {
  const before = readLines().length;
  await invokeFunction(send, {}, fn, 5_000);
  return readLines().slice(before);
}

function readLines(): CapacityRecord[] {
  try {
    return readFileSync(file, 'utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as CapacityRecord);
  } catch {
    return [];
  }
}

const touched = (records: CapacityRecord[]) => records.flatMap((record) => record.touches.map(({ on, partition, access }) => `${access} ${on} ${partition}`)).sort();

describe('the capacity log', () => {
  const pk = `CAPACITY#${randomUUID()}`;
  const partner = `TXS#cap_${randomUUID().slice(0, 8)}`;

  it('logs a put on the table and on the index its item enters, with the function that made it', async () => {
    const records = await logged('transactions-checkout-intent', () => db.send(new PutCommand({ TableName: tableName, Item: { pk, sk: 'TX', gsi1pk: partner, gsi1sk: '2026-01-01#a', payload: 'x'.repeat(1500) } })));
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ fn: 'transactions-checkout-intent', command: 'PutItemCommand' });
    expect(touched(records)).toEqual([`write gsi1 ${partner}`, `write table ${pk}`]);
    // a 1.5 KB item: 2 write units on the table, 2 on the ALL-projected index
    expect(records[0]!.touches.find((touch) => touch.on === 'table')!.units).toBe(2);
    expect(records[0]!.touches.find((touch) => touch.on === 'gsi1')!.units).toBe(2);
  });

  it("counts a move of an item's index key on both index partitions, the one it left and the one it entered", async () => {
    const records = await logged('processor-webhook', () =>
      db.send(new UpdateCommand({ TableName: tableName, Key: { pk, sk: 'TX' }, UpdateExpression: 'SET gsi1pk = :to', ExpressionAttributeValues: { ':to': `${partner}-2` } })),
    );
    expect(touched(records)).toEqual([`write gsi1 ${partner}`, `write gsi1 ${partner}-2`, `write table ${pk}`]);
  });

  it('leaves out an index the write does not change, and counts a condition check on its item', async () => {
    const other = `CAPACITY#${randomUUID()}`;
    const records = await logged('transactions-checkout-intent', () =>
      db.send(
        new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName: tableName, Item: { pk: other, sk: 'TX' } } },
            { ConditionCheck: { TableName: tableName, Key: { pk, sk: 'TX' }, ConditionExpression: 'attribute_exists(pk)' } },
          ],
        }),
      ),
    );
    expect(touched(records)).toEqual([`write table ${other}`, `write table ${pk}`].sort());
    expect(records[0]!.touches.every((touch) => touch.units > 0)).toBe(true);
  });

  it('logs reads: a Query on the partition its key condition names, a GetItem on its key', async () => {
    const query = await logged('transactions-list', () =>
      db.send(new QueryCommand({ TableName: tableName, IndexName: 'gsi1', KeyConditionExpression: '#pk = :pk', ExpressionAttributeNames: { '#pk': 'gsi1pk' }, ExpressionAttributeValues: { ':pk': `${partner}-2` } })),
    );
    expect(touched(query)).toEqual([`read gsi1 ${partner}-2`]);
    const get = await logged('transactions-get', () => db.send(new GetCommand({ TableName: tableName, Key: { pk, sk: 'TX' }, ConsistentRead: true })));
    expect(get[0]).toMatchObject({ fn: 'transactions-get', touches: [{ on: 'table', partition: pk, access: 'read', units: 1 }] });
  });

  it('logs a failed call as failed, and leaves the call to fail as it would', async () => {
    const put = () => db.send(new PutCommand({ TableName: tableName, Item: { pk, sk: 'TX' }, ConditionExpression: 'attribute_not_exists(pk)' }));
    const before = readLines().length;
    await expect(invokeFunction(put, {}, 'transactions-checkout-intent', 5_000)).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
    expect(readLines().slice(before)).toEqual([expect.objectContaining({ failed: 'ConditionalCheckFailedException', touches: [] })]);
  });
});
