/**
 * The transactional outbox, read and leased by the sweep (docs/data-model.md: the outbox index). A pending
 * delivery sits in the sparse gsi2 partition `OUTBOX`, sort key `<relayAfter>#<deliveryId>`, from the write that
 * creates it until it is finished; the sweep reads it oldest first and leases an entry by moving its sort key
 * forward, so that concurrent sweeps relay it once.
 */
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { writeIfCondition } from './conditions';
import { documentClient, tableName } from './dynamo';
import type { OutboxEntry } from '../use-cases/webhook-outbox';
import { keys } from './keys';

export type { OutboxEntry };

const PAGE_SIZE = 100;

/**
 * The outbox entries whose relay time is at or before `upTo` (every entry when `undefined`), oldest first, a
 * page at a time. The index is eventually consistent: an entry may be a moment stale, which the lease's
 * condition catches.
 */
export async function* outboxEntries(upTo: string | undefined): AsyncGenerator<OutboxEntry[]> {
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await documentClient.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: 'gsi2',
        KeyConditionExpression: upTo === undefined ? 'gsi2pk = :outbox' : 'gsi2pk = :outbox AND gsi2sk <= :upTo',
        ExpressionAttributeValues: { ':outbox': keys.outbox, ...(upTo === undefined ? {} : { ':upTo': `${upTo}#\uffff` }) },
        ProjectionExpression: 'id, partnerId, gsi2sk, attempts, nextAttemptAt, leaseUntil',
        Limit: PAGE_SIZE,
        ExclusiveStartKey: startKey,
      }),
    );
    const entries = (page.Items ?? []).map((item) => {
      const sortKey = item.gsi2sk as string;
      return {
        deliveryId: item.id as string,
        partnerId: item.partnerId as string,
        sortKey,
        relayAfter: keys.outboxRelayAfter(sortKey),
        attempts: item.attempts as number,
        nextAttemptAt: item.nextAttemptAt as number | undefined,
        leaseUntil: item.leaseUntil as number | undefined,
      };
    });
    if (entries.length > 0) yield entries;
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
}

/**
 * Moves an entry's relay time to `relayAfter` if it is still pending and unchanged since it was read. `false`
 * when another sweep leased it first, or the consumer moved or finished it meanwhile.
 */
export function leaseOutboxEntry(entry: OutboxEntry, relayAfter: string): Promise<boolean> {
  return moveOutboxEntry(entry.deliveryId, entry.sortKey, keys.outboxIndex(entry.deliveryId, relayAfter).gsi2sk as string);
}

/** Gives a lease back (the enqueue failed), unless the entry moved since: the next sweep finds it again. */
export function releaseOutboxLease(entry: OutboxEntry, leasedRelayAfter: string): Promise<boolean> {
  return moveOutboxEntry(entry.deliveryId, keys.outboxIndex(entry.deliveryId, leasedRelayAfter).gsi2sk as string, entry.sortKey);
}

function moveOutboxEntry(deliveryId: string, from: string, to: string): Promise<boolean> {
  return writeIfCondition(
    documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.webhookDelivery(deliveryId),
        UpdateExpression: 'SET gsi2sk = :to',
        ConditionExpression: 'gsi2pk = :outbox AND gsi2sk = :from AND #status = :pending',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':outbox': keys.outbox, ':from': from, ':to': to, ':pending': 'pending' },
      }),
    ),
  );
}
