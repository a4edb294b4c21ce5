/**
 * `TransactWriteItems` for writes that may meet a concurrent write to one of their items (two admins creating
 * endpoints of one partner, the consumer recording an attempt while the outbox sweep moves the same delivery).
 * DynamoDB cancels such a transaction with `TransactionConflict`, and the SDK does not retry it: a few quick
 * retries here keep that race from surfacing as a 500 or a redelivered message. A failed condition is never
 * retried: it is the caller's answer.
 *
 * Each call carries a fresh `ClientRequestToken`, which the SDK's own retries of that call resend: a transaction
 * that committed but whose answer was lost (a timeout, a reset connection) is answered as committed on the SDK's
 * retry, instead of failing on its own conditions as if another writer had got there first.
 */
import { randomUUID } from 'node:crypto';
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';
import { documentClient, isConflictOnly } from './dynamo';

export { isConflictOnly };

const CONFLICT_RETRIES = 3;

export async function transactWrite(items: NonNullable<TransactWriteCommandInput['TransactItems']>): Promise<void> {
  for (let retry = 0; ; retry++) {
    try {
      await documentClient.send(new TransactWriteCommand({ TransactItems: items, ClientRequestToken: randomUUID() }));
      return;
    } catch (error) {
      if (retry >= CONFLICT_RETRIES || !isConflictOnly(error)) throw error;
      await sleep(10 * 2 ** retry + Math.random() * 20);
    }
  }
}
