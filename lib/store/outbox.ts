/**
 * The transactional outbox, read and leased by the sweep (docs/data-model.md: the outbox index). A pending delivery
 * sits in one of {@link OUTBOX_SHARDS} partitions `OUTBOX#<shard>` of the sparse, keys-only gsi7, sort key
 * `<relayAfter>#<deliveryId>`, from the write that creates it until it is finished. The sweep reads every shard,
 * merged oldest first, and leases an entry by moving its sort key forward, so that concurrent sweeps relay it once.
 *
 * Deliveries written before the shards hold their entry in the gsi2 partition `OUTBOX` instead, until a write moves it
 * (into its shard) or removes it: the sweep reads that partition too until they are gone, which takes a day at most
 * (a delivery finishes or fails within 24 h, but a parked one, whose key lies an hour or two past that).
 */
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { inPool, range } from '../pool';
import type { OutboxDelivery, OutboxEntry } from '../use-cases/webhook-outbox';
import { batchGetAll } from './batch-get';
import { isConditionFailure, writeIfCondition } from './conditions';
import { outboxMove } from './deliveries';
import { documentClient, tableName } from './dynamo';
import { keys, OUTBOX_SHARDS } from './keys';

export type { OutboxDelivery, OutboxEntry };

const PAGE_SIZE = 100;

/** Partitions queried at once. */
const QUERY_CONCURRENCY = 16;

/** A partition of the outbox: one of gsi7's shards, or gsi2's legacy `OUTBOX`. */
interface OutboxPartition {
  index: 'gsi7' | 'gsi2';
  partitionKey: string;
  sortKey: string;
  value: string;
}

const PARTITIONS: readonly OutboxPartition[] = [
  ...range(OUTBOX_SHARDS).map((shard): OutboxPartition => ({ index: 'gsi7', partitionKey: 'gsi7pk', sortKey: 'gsi7sk', value: keys.outboxPartition(shard) })),
  { index: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk', value: keys.legacyOutbox },
];
const partitionByValue = new Map(PARTITIONS.map((partition) => [partition.value, partition]));

/** A partition being read: the entries read and not yet handed out (oldest first), and where its next page starts. */
interface PartitionRead {
  partition: OutboxPartition;
  entries: OutboxEntry[];
  next: Record<string, unknown> | undefined;
  done: boolean;
}

/** Reads `read`'s next page (pages until one holds an entry, or the partition ends). */
async function readNextPage(read: PartitionRead, upTo: string | undefined): Promise<void> {
  const { index, partitionKey, sortKey, value } = read.partition;
  do {
    const page = await documentClient.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: index,
        KeyConditionExpression: upTo === undefined ? `${partitionKey} = :partition` : `${partitionKey} = :partition AND ${sortKey} <= :upTo`,
        ExpressionAttributeValues: { ':partition': value, ...(upTo === undefined ? {} : { ':upTo': `${upTo}#\uffff` }) },
        ProjectionExpression: sortKey,
        Limit: PAGE_SIZE,
        ExclusiveStartKey: read.next,
      }),
    );
    for (const item of page.Items ?? []) {
      const entrySortKey = item[sortKey] as string;
      read.entries.push({ partition: value, sortKey: entrySortKey, ...keys.outboxEntry(entrySortKey) });
    }
    read.next = page.LastEvaluatedKey;
    read.done = read.next === undefined;
  } while (read.entries.length === 0 && !read.done);
}

/**
 * The outbox entries whose relay time is at or before `upTo` (every entry when `undefined`), oldest first across every
 * partition, a page at a time: each partition is read a page ahead ({@link QUERY_CONCURRENCY} queries at once), and an
 * entry is handed out once no partition still being read can hold an earlier one. The index is eventually
 * consistent: an entry may be a moment stale, which the lease's condition catches.
 */
export async function* outboxEntries(upTo: string | undefined): AsyncGenerator<OutboxEntry[]> {
  const reads: PartitionRead[] = PARTITIONS.map((partition) => ({ partition, entries: [], next: undefined, done: false }));
  for (;;) {
    await inPool(reads.filter((read) => read.entries.length === 0 && !read.done), QUERY_CONCURRENCY, (read) => readNextPage(read, upTo));
    // What a partition has not read yet sorts after its last entry in hand (each one not done holds one: just read).
    const bound = reads
      .filter((read) => !read.done)
      .map((read) => (read.entries[read.entries.length - 1] as OutboxEntry).sortKey)
      .reduce<string | undefined>((min, sortKey) => (min === undefined || sortKey < min ? sortKey : min), undefined);
    const page = reads
      .flatMap((read) => read.entries.filter((entry) => bound === undefined || entry.sortKey <= bound))
      .sort((a, b) => (a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : 0))
      .slice(0, PAGE_SIZE);
    if (page.length === 0) return;
    const handedOut = new Set(page);
    for (const read of reads) read.entries = read.entries.filter((entry) => !handedOut.has(entry));
    yield page;
  }
}

const toOutboxDelivery = (item: Record<string, unknown>): OutboxDelivery => ({
  partnerId: item.partnerId as string,
  nextAttemptAt: item.nextAttemptAt as number | undefined,
  leaseUntil: item.leaseUntil as number | undefined,
});

/**
 * What the sweep needs of each of `deliveryIds` that exists (the outbox lists only keys): one strongly consistent
 * read of the few attributes it needs, 100 deliveries a call.
 */
export async function pendingDeliveries(deliveryIds: readonly string[]): Promise<Map<string, OutboxDelivery>> {
  const items = await batchGetAll(deliveryIds.map(keys.webhookDelivery), 'id, partnerId, nextAttemptAt, leaseUntil');
  return new Map(items.map((item) => [item.id as string, toOutboxDelivery(item)]));
}

/**
 * Moves an entry's relay time to `relayAfter` (into its shard, if it was listed in the legacy partition) if it is
 * still pending and unchanged since it was read, on the index it was read from: the delivery as leased, or
 * `undefined` when another sweep leased it first, or the consumer moved or finished it meanwhile.
 */
export async function leaseOutboxEntry(entry: OutboxEntry, relayAfter: string): Promise<OutboxDelivery | undefined> {
  const from = partitionByValue.get(entry.partition);
  if (from === undefined) throw new Error(`not an outbox partition: ${entry.partition}`);
  const move = outboxMove(entry.deliveryId, Date.parse(relayAfter));
  try {
    const { Attributes } = await documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.webhookDelivery(entry.deliveryId),
        UpdateExpression: `SET ${move.set} REMOVE ${move.remove}`,
        ConditionExpression: `${from.partitionKey} = :fromPk AND ${from.sortKey} = :fromSk AND #status = :pending`,
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':fromPk': from.value, ':fromSk': entry.sortKey, ':pending': 'pending', ...move.values },
        // What the enqueue needs (the partner, for the fair queue), from the write itself: the index holds keys only.
        ReturnValues: 'ALL_NEW',
      }),
    );
    return Attributes === undefined ? undefined : toOutboxDelivery(Attributes);
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    await dropFinishedEntry(entry, from);
    return undefined;
  }
}

/**
 * Removes an entry left on a delivery that is no longer pending (one finished by a function written before this
 * index, which removed only its gsi2 keys: a rolling deploy's overlap). Such an entry would stay the oldest of its
 * shard, be listed by every sweep and never leased. Conditional on the entry as listed and the delivery finished, so an
 * entry another sweep leased, or one the consumer moved, is left alone.
 */
async function dropFinishedEntry(entry: OutboxEntry, from: { partitionKey: string; sortKey: string; value: string }): Promise<void> {
  await writeIfCondition(
    documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.webhookDelivery(entry.deliveryId),
        UpdateExpression: `REMOVE ${from.partitionKey}, ${from.sortKey}`,
        ConditionExpression: `${from.partitionKey} = :fromPk AND ${from.sortKey} = :fromSk AND #status <> :pending`,
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':fromPk': from.value, ':fromSk': entry.sortKey, ':pending': 'pending' },
      }),
    ),
  );
}

/** Gives a lease back (the enqueue failed), unless the entry moved since: the next sweep finds it again (in its shard). */
export function releaseOutboxLease(entry: OutboxEntry, leasedRelayAfter: string): Promise<boolean> {
  const leased = keys.outboxIndex(entry.deliveryId, leasedRelayAfter);
  const back = outboxMove(entry.deliveryId, Date.parse(entry.relayAfter));
  return writeIfCondition(
    documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.webhookDelivery(entry.deliveryId),
        UpdateExpression: `SET ${back.set}`,
        ConditionExpression: 'gsi7pk = :leasedPk AND gsi7sk = :leasedSk AND #status = :pending',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':leasedPk': leased.gsi7pk, ':leasedSk': leased.gsi7sk, ':pending': 'pending', ...back.values },
      }),
    ),
  );
}
