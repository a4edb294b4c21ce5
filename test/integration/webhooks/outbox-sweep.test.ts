/**
 * The outbox sweep against DynamoDB Local: it relays a pending delivery once its relay time has passed, leases
 * it so that concurrent sweeps send it once, gives the lease back when the enqueue fails, and leaves alone an
 * entry that changed since it was read; it reads every shard of the outbox, oldest first, and the partition
 * deliveries written before the shards still hold. The clock is given, and the sweep sees only this file's entries
 * (the table and its outbox are shared with other test files).
 */
import { describe, expect, it } from '@jest/globals';
import { GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { newId } from '../../../lib/domain/ids';
import type { WebhookDelivery } from '../../../lib/domain/webhooks';
import { deliveryItem, FIRST_RELAY_MS, putNewDelivery } from '../../../lib/store/deliveries';
import { documentClient, tableName } from '../../../lib/store/dynamo';
import { keys } from '../../../lib/store/keys';
import * as outbox from '../../../lib/store/outbox';
import { type OutboxDeps, SWEEP_LEASE_MS, sweepOutbox } from '../../../lib/use-cases/webhook-outbox';
import type { DeliveryQueue } from '../../../lib/webhooks/queue';
import { legacyOutboxItem } from '../../support/deliveries';

/** A delivery created at `createdAt` (a fixed past time: its relay time, 30 s later, is under the test's control). */
const pendingDelivery = (createdAt: Date): WebhookDelivery => ({
  id: newId.webhookDelivery(),
  eventId: newId.partnerEvent(),
  endpointId: newId.webhookEndpoint(),
  partnerId: newId.partner(),
  event: 'transaction_failed',
  svcTxId: newId.svcTx(),
  payload: '{"event":"transaction_failed"}',
  status: 'pending',
  attempts: 0,
  lastHttpStatus: null,
  lastError: null,
  createdAt: createdAt.toISOString(),
  updatedAt: createdAt.toISOString(),
});

const writeDelivery = (delivery: WebhookDelivery) => documentClient.send(new TransactWriteCommand({ TransactItems: [putNewDelivery(delivery)] }));

/** Writes `delivery` as the service did before the outbox had shards: its entry in gsi2 `OUTBOX`. */
const writeLegacyDelivery = (delivery: WebhookDelivery) =>
  documentClient.send(new PutCommand({ TableName: tableName, Item: legacyOutboxItem(deliveryItem(delivery)), ConditionExpression: 'attribute_not_exists(pk)' }));

const storedItem = async (deliveryId: string) => {
  const { Item } = await documentClient.send(new GetCommand({ TableName: tableName, Key: keys.webhookDelivery(deliveryId), ConsistentRead: true }));
  if (Item === undefined) throw new Error(`no delivery ${deliveryId}`);
  return Item;
};

const outboxKeyOf = async (deliveryId: string) => (await storedItem(deliveryId)).gsi7sk as string | undefined;

/** The sweep's adapters: the real outbox store, seeing only `ids`, and a queue that records (or fails). */
function sweepDeps(ids: Set<string>, options: { failEnqueue?: boolean; beforeLease?: (deliveryId: string) => Promise<void> } = {}) {
  const sent: string[] = [];
  const delays = new Map<string, number>();
  const deliveryQueue: DeliveryQueue = {
    async send(message, delaySeconds) {
      if (options.failEnqueue === true) throw new Error('queue unavailable');
      if (!('deliveryId' in message)) throw new Error('the sweep sends delivery messages only');
      sent.push(message.deliveryId);
      delays.set(message.deliveryId, delaySeconds);
    },
  };
  const deps: OutboxDeps = {
    deliveryQueue,
    outbox: {
      async *outboxEntries(upTo) {
        for await (const page of outbox.outboxEntries(upTo)) yield page.filter((entry) => ids.has(entry.deliveryId));
      },
      pendingDeliveries: outbox.pendingDeliveries,
      async leaseOutboxEntry(entry, relayAfter) {
        await options.beforeLease?.(entry.deliveryId);
        return outbox.leaseOutboxEntry(entry, relayAfter);
      },
      releaseOutboxLease: outbox.releaseOutboxLease,
    },
  };
  return { deps, sent, delays };
}

/** A moment of the past, different per test, so no other entry of the shared outbox is due at it. */
const pastMoment = (offsetMinutes: number) => new Date(Date.UTC(2001, 1, 3, 4, offsetMinutes, 0, 0) + Math.floor(Math.random() * 1000));

describe('the outbox sweep', () => {
  it('relays a delivery only once its relay grace has passed, and then moves it forward by the lease', async () => {
    const createdAt = pastMoment(0);
    const delivery = pendingDelivery(createdAt);
    await writeDelivery(delivery);
    const { deps, sent, delays } = sweepDeps(new Set([delivery.id]));

    const early = await sweepOutbox(deps, { now: new Date(createdAt.getTime() + FIRST_RELAY_MS - 1) });
    expect(early.relayed).toEqual([]);

    const now = new Date(createdAt.getTime() + FIRST_RELAY_MS);
    const due = await sweepOutbox(deps, { now });

    expect(due.relayed).toEqual([delivery.id]);
    expect(sent).toEqual([delivery.id]);
    expect(delays.get(delivery.id)).toBe(0);
    expect(await outboxKeyOf(delivery.id)).toBe(`${new Date(now.getTime() + SWEEP_LEASE_MS).toISOString()}#${delivery.id}`);
  });

  it('removes an entry left on a delivery that finished (by a function that knew only gsi2), and relays nothing', async () => {
    // Arrange: a delivery in its gsi7 shard, then finished the old way: status succeeded, only gsi2 keys removed
    const createdAt = pastMoment(7);
    const delivery = pendingDelivery(createdAt);
    await writeDelivery(delivery);
    await documentClient.send(
      new UpdateCommand({ TableName: tableName, Key: keys.webhookDelivery(delivery.id), UpdateExpression: 'SET #status = :succeeded REMOVE gsi2pk, gsi2sk', ExpressionAttributeNames: { '#status': 'status' }, ExpressionAttributeValues: { ':succeeded': 'succeeded' } }),
    );
    const { deps, sent } = sweepDeps(new Set([delivery.id]));

    // Act: a sweep when it is due, and another
    const first = await sweepOutbox(deps, { now: new Date(createdAt.getTime() + FIRST_RELAY_MS) });
    const entriesAfter: string[] = [];
    for await (const page of outbox.outboxEntries(undefined)) entriesAfter.push(...page.map((entry) => entry.deliveryId).filter((id) => id === delivery.id));

    // Assert: nothing sent, the entry gone from the outbox (so no later sweep lists it), the delivery otherwise as it was
    expect(first).toMatchObject({ relayed: [], skipped: 1 });
    expect(sent).toEqual([]);
    expect(entriesAfter).toEqual([]);
    expect(await storedItem(delivery.id)).toMatchObject({ status: 'succeeded', id: delivery.id });
    expect(await outboxKeyOf(delivery.id)).toBeUndefined();
  });

  it('sends a due delivery once when sweeps run concurrently (the lease is conditional)', async () => {
    const createdAt = pastMoment(10);
    const deliveries = [pendingDelivery(createdAt), pendingDelivery(createdAt), pendingDelivery(createdAt)];
    for (const delivery of deliveries) await writeDelivery(delivery);
    const { deps, sent } = sweepDeps(new Set(deliveries.map((delivery) => delivery.id)));
    const now = new Date(createdAt.getTime() + FIRST_RELAY_MS);

    const results = await Promise.all([1, 2, 3, 4].map(() => sweepOutbox(deps, { now })));

    expect(sent.sort()).toEqual(deliveries.map((delivery) => delivery.id).sort());
    expect(results.reduce((sum, result) => sum + result.relayed.length, 0)).toBe(3);
    expect(results.reduce((sum, result) => sum + result.skipped, 0)).toBeGreaterThan(0);
  });

  it('gives the lease back when the enqueue fails, so the next sweep relays the delivery', async () => {
    const createdAt = pastMoment(20);
    const delivery = pendingDelivery(createdAt);
    await writeDelivery(delivery);
    const keyBefore = await outboxKeyOf(delivery.id);
    const now = new Date(createdAt.getTime() + FIRST_RELAY_MS);

    const failed = await sweepOutbox(sweepDeps(new Set([delivery.id]), { failEnqueue: true }).deps, { now });
    expect(failed.failed.map((failure) => failure.deliveryId)).toEqual([delivery.id]);
    expect(await outboxKeyOf(delivery.id)).toBe(keyBefore);

    const { deps, sent } = sweepDeps(new Set([delivery.id]));
    await sweepOutbox(deps, { now });
    expect(sent).toEqual([delivery.id]);
  });

  it('leaves an entry that changed after it was read (the consumer claimed it) to its new owner', async () => {
    const createdAt = pastMoment(30);
    const delivery = pendingDelivery(createdAt);
    await writeDelivery(delivery);
    const claim = (deliveryId: string) =>
      documentClient.send(
        new UpdateCommand({
          TableName: tableName,
          Key: keys.webhookDelivery(deliveryId),
          UpdateExpression: 'SET attempts = :one, gsi7sk = :later',
          ExpressionAttributeValues: { ':one': 1, ':later': `2001-02-03T05:00:00.000Z#${deliveryId}` },
        }),
      ).then(() => undefined);
    const { deps, sent } = sweepDeps(new Set([delivery.id]), { beforeLease: claim });

    const result = await sweepOutbox(deps, { now: new Date(createdAt.getTime() + FIRST_RELAY_MS) });

    expect(result).toMatchObject({ relayed: [], skipped: 1 });
    expect(sent).toEqual([]);
    expect(await outboxKeyOf(delivery.id)).toBe(`2001-02-03T05:00:00.000Z#${delivery.id}`);
  });

  it('relays every pending delivery when the queue is known to be empty: one not yet attempted at once, a retry delayed until it is due, none due past 15 minutes', async () => {
    const now = pastMoment(40);
    const fresh = pendingDelivery(now);
    const retry = pendingDelivery(new Date(now.getTime() - 60_000));
    await writeDelivery(fresh);
    await writeDelivery(retry);
    // The retry's first attempt failed; its next one is due in a minute. Another's is due in an hour (a parked deferral)
    const distant = pendingDelivery(new Date(now.getTime() - 60_000));
    await writeDelivery(distant);
    for (const [delivery, dueInMs] of [[retry, 60_000], [distant, 3_600_000]] as const) {
      await documentClient.send(
        new UpdateCommand({
          TableName: tableName,
          Key: keys.webhookDelivery(delivery.id),
          UpdateExpression: 'SET attempts = :one, nextAttemptAt = :due, gsi7sk = :next',
          ExpressionAttributeValues: { ':one': 1, ':due': now.getTime() + dueInMs, ':next': `${new Date(now.getTime() + dueInMs + 30_000).toISOString()}#${delivery.id}` },
        }),
      );
    }
    const { deps, sent, delays } = sweepDeps(new Set([fresh.id, retry.id, distant.id]));

    expect((await sweepOutbox(deps, { now })).relayed).toEqual([]);
    const result = await sweepOutbox(deps, { now, queueEmpty: true });

    expect(result.relayed.sort()).toEqual([fresh.id, retry.id].sort());
    expect(sent.sort()).toEqual([fresh.id, retry.id].sort());
    expect(delays.get(fresh.id)).toBe(0);
    expect(delays.get(retry.id)).toBe(60);
    // ... and leased past that delay, so the next sweep leaves it to the delayed message
    expect((await sweepOutbox(deps, { now: new Date(now.getTime() + 61_000) })).relayed).toEqual([]);
  });

  it('relays a delivery whose attempt was cut short (a process killed mid-attempt) delayed until its attempt lease ends, not after the sweep lease', async () => {
    // Arrange: an attempt claimed 10 s ago by a process that then died: its 60 s lease runs 50 s more
    const now = pastMoment(41);
    const cut = pendingDelivery(new Date(now.getTime() - 20_000));
    await writeDelivery(cut);
    await documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.webhookDelivery(cut.id),
        UpdateExpression: 'SET attempts = :one, leaseUntil = :lease, gsi7sk = :next',
        ExpressionAttributeValues: { ':one': 1, ':lease': now.getTime() + 50_000, ':next': `${new Date(now.getTime() + 80_000).toISOString()}#${cut.id}` },
      }),
    );
    const { deps, delays } = sweepDeps(new Set([cut.id]));

    // Act: the first sweep after the restart (the queue empty)
    const result = await sweepOutbox(deps, { now, queueEmpty: true });

    // Assert: relayed, due as the lease ends (a message at once would find the attempt still leased, and be dropped)
    expect(result.relayed).toEqual([cut.id]);
    expect(delays.get(cut.id)).toBe(50);
  });
});

describe('the outbox shards', () => {
  it('puts every new delivery in its shard of gsi7, spread over many, and none in gsi2', async () => {
    const createdAt = pastMoment(50);
    const deliveries = Array.from({ length: 24 }, () => pendingDelivery(createdAt));

    for (const delivery of deliveries) await writeDelivery(delivery);

    const items = await Promise.all(deliveries.map((delivery) => storedItem(delivery.id)));
    for (const [i, item] of items.entries()) {
      const delivery = deliveries[i] as WebhookDelivery;
      expect(item).toMatchObject(keys.outboxIndex(delivery.id, new Date(createdAt.getTime() + FIRST_RELAY_MS).toISOString()));
      expect(item.gsi7pk).toMatch(/^OUTBOX#\d+$/);
      expect(item.gsi2pk).toBeUndefined();
      expect(item.gsi2sk).toBeUndefined();
    }
    // 24 ids over 128 shards: all in one shard would be a broken hash (odds about 128^-23)
    expect(new Set(items.map((item) => item.gsi7pk)).size).toBeGreaterThan(8);
  });

  it('lists due entries of every shard and of the legacy partition merged oldest first, past a page of 100', async () => {
    // Arrange: 130 deliveries a millisecond apart (written in a shuffled order), a few of them written before the shards
    const base = pastMoment(52).getTime();
    const deliveries = Array.from({ length: 130 }, (_, i) => pendingDelivery(new Date(base + i)));
    const shuffled = [...deliveries].sort(() => Math.random() - 0.5);
    for (const [i, delivery] of shuffled.entries()) await (i % 10 === 0 ? writeLegacyDelivery(delivery) : writeDelivery(delivery));
    const ours = new Set(deliveries.map((delivery) => delivery.id));

    // Act
    const listed: string[] = [];
    for await (const page of outbox.outboxEntries(new Date(base + FIRST_RELAY_MS + 1_000).toISOString())) {
      listed.push(...page.filter((entry) => ours.has(entry.deliveryId)).map((entry) => entry.deliveryId));
    }

    // Assert
    expect(listed).toEqual(deliveries.map((delivery) => delivery.id));
  });

  it('relays due deliveries of many shards once each under two concurrent sweeps', async () => {
    const createdAt = pastMoment(54);
    const deliveries = Array.from({ length: 40 }, (_, i) => pendingDelivery(new Date(createdAt.getTime() + i * 7)));
    for (const delivery of deliveries) await writeDelivery(delivery);
    const shards = new Set(await Promise.all(deliveries.map(async (delivery) => (await storedItem(delivery.id)).gsi7pk)));
    const { deps, sent } = sweepDeps(new Set(deliveries.map((delivery) => delivery.id)));
    const now = new Date(createdAt.getTime() + FIRST_RELAY_MS + 1_000);

    const results = await Promise.all([sweepOutbox(deps, { now }), sweepOutbox(deps, { now })]);

    expect(shards.size).toBeGreaterThan(8);
    expect([...sent].sort()).toEqual(deliveries.map((delivery) => delivery.id).sort());
    expect(results.reduce((sum, result) => sum + result.relayed.length, 0)).toBe(deliveries.length);
  });

  it('relays a delivery written before the shards (its entry in gsi2 OUTBOX) with its partner, moving the entry into its shard', async () => {
    const createdAt = pastMoment(56);
    const delivery = pendingDelivery(createdAt);
    await writeLegacyDelivery(delivery);
    const enqueued: unknown[] = [];
    const { deps } = sweepDeps(new Set([delivery.id]));
    const now = new Date(createdAt.getTime() + FIRST_RELAY_MS);

    const result = await sweepOutbox({ ...deps, deliveryQueue: { send: async (message) => void enqueued.push(message) } }, { now });

    expect(result.relayed).toEqual([delivery.id]);
    expect(enqueued).toEqual([{ deliveryId: delivery.id, partnerId: delivery.partnerId }]);
    const item = await storedItem(delivery.id);
    expect(item).toMatchObject(keys.outboxIndex(delivery.id, new Date(now.getTime() + SWEEP_LEASE_MS).toISOString()));
    expect(item.gsi2pk).toBeUndefined();
    expect(item.gsi2sk).toBeUndefined();
  });

  it('gives a legacy entry’s lease back into its shard when the enqueue fails, where the next sweep finds it', async () => {
    const createdAt = pastMoment(58);
    const delivery = pendingDelivery(createdAt);
    await writeLegacyDelivery(delivery);
    const legacySortKey = (await storedItem(delivery.id)).gsi2sk;
    const now = new Date(createdAt.getTime() + FIRST_RELAY_MS);

    await sweepOutbox(sweepDeps(new Set([delivery.id]), { failEnqueue: true }).deps, { now });

    const item = await storedItem(delivery.id);
    expect(item).toMatchObject({ gsi7pk: keys.outboxIndex(delivery.id, createdAt.toISOString()).gsi7pk, gsi7sk: legacySortKey });
    expect(item.gsi2pk).toBeUndefined();
    const { deps, sent } = sweepDeps(new Set([delivery.id]));
    await sweepOutbox(deps, { now });
    expect(sent).toEqual([delivery.id]);
  });
});
