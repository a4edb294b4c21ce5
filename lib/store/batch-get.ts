/**
 * `BatchGetItem` over any number of keys, strongly consistent: 100 keys a call (DynamoDB's limit), and the keys a
 * call leaves unprocessed (under load) asked for again with a growing pause, a bounded number of times.
 */
import { BatchGetCommand, type BatchGetCommandOutput } from '@aws-sdk/lib-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';
import { documentClient, KeysLeftUnprocessed, tableName } from './dynamo';
import type { TableKey } from './keys';

const KEYS_PER_CALL = 100;
const MAX_TRIES = 6;

export async function batchGetAll(keys: readonly TableKey[], projection?: string, names?: Record<string, string>): Promise<Record<string, unknown>[]> {
  const found: Record<string, unknown>[] = [];
  for (let start = 0; start < keys.length; start += KEYS_PER_CALL) {
    let pending: Record<string, unknown>[] = keys.slice(start, start + KEYS_PER_CALL).map((key) => ({ ...key }));
    for (let tries = 1; pending.length > 0; tries++) {
      if (tries > MAX_TRIES) throw new KeysLeftUnprocessed(`BatchGetItem left ${pending.length} keys unprocessed after ${MAX_TRIES} tries`);
      if (tries > 1) await sleep(20 * 2 ** tries);
      const result: BatchGetCommandOutput = await documentClient.send(
        new BatchGetCommand({
          RequestItems: { [tableName]: { Keys: pending, ConsistentRead: true, ...(projection === undefined ? {} : { ProjectionExpression: projection }), ...(names === undefined ? {} : { ExpressionAttributeNames: names }) } },
        }),
      );
      found.push(...(result.Responses?.[tableName] ?? []));
      pending = result.UnprocessedKeys?.[tableName]?.Keys ?? [];
    }
  }
  return found;
}
