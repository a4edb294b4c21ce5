/**
 * Relaying the transactional outbox to the delivery queue, so that no partner webhook is lost if a process dies
 * between the DynamoDB write that creates a delivery and the enqueue.
 *
 * The write that moves a transaction also writes its pending deliveries (one DynamoDB transaction), each in the
 * outbox index. Two paths then put a `{ deliveryId }` message on the queue, and a duplicate is harmless (the
 * consumer claims an attempt atomically, and ignores a finished delivery), so the goal is at least once:
 * - the stream relay: the table's stream carries every new item; a new pending delivery is enqueued at once
 *   (`relayNewDelivery`, milliseconds after the write);
 * - the sweep: every pending delivery whose relay time has passed is enqueued again (`sweepOutbox`, every
 *   minute in AWS, every few seconds locally), its relay time moved forward by a lease first so that
 *   concurrent sweeps send it once. It catches whatever the stream relay missed (the relay down, its retries
 *   exhausted) and messages lost on the way (locally, the in-memory queue of a process that died).
 */
import { type DeliveryQueue, MAX_DELAY_SECONDS } from '../webhooks/queue';

/**
 * A pending delivery as the outbox lists it: its keys only (the store's sparse, sharded index: docs/data-model.md), so
 * that the writes to a delivery that do not move its entry cost the index nothing.
 */
export interface OutboxEntry {
  deliveryId: string;
  /** The partition it was listed in (the store's: a shard, or the legacy one): a lease is conditional on it. */
  partition: string;
  /** The entry's sort key as read (`<relayAfter ISO>#<deliveryId>`): a lease is conditional on it. */
  sortKey: string;
  relayAfter: string;
}

/** What the sweep needs of a pending delivery to relay it: as its lease wrote it, or read (the queue empty). */
export interface OutboxDelivery {
  /** The delivery's partner (its message's group in the fair queue). */
  partnerId: string;
  /** Epoch ms: when its next attempt is due (a retry's backoff), if it waits for one. */
  nextAttemptAt?: number | undefined;
  /** Epoch ms: an attempt is running on it until then (its lease), if one is. */
  leaseUntil?: number | undefined;
}

export interface OutboxDeps {
  outbox: {
    /** The entries due by `upTo` (every one when `undefined`), oldest first across the outbox's partitions, a page at a time. */
    outboxEntries(upTo: string | undefined): AsyncIterable<OutboxEntry[]>;
    /** Those of the deliveries that exist, as they are now. */
    pendingDeliveries(deliveryIds: readonly string[]): Promise<Map<string, OutboxDelivery>>;
    /** Moves the entry to `relayAfter` unless it changed since it was listed: the delivery as leased, or `undefined`. */
    leaseOutboxEntry(entry: OutboxEntry, relayAfter: string): Promise<OutboxDelivery | undefined>;
    releaseOutboxLease(entry: OutboxEntry, leasedRelayAfter: string): Promise<boolean>;
  };
  deliveryQueue: DeliveryQueue;
}

/**
 * How far a sweep moves an entry it relays. Longer than a message can legitimately take from the queue to the
 * consumer's claim (the consumer's visibility timeout, 180 s, bounds one receive), so a sweep does not send
 * again while the first message is still on its way; short enough that a message lost anyway is sent again
 * within minutes.
 */
export const SWEEP_LEASE_MS = 5 * 60_000;

/** Entries one sweep relays at most (the rest, oldest first, wait for the next sweep). */
const SWEEP_MAX_ENTRIES = 1_000;

/** Whether a stream image is a delivery just created and not yet attempted: what the relay enqueues. */
export function isNewPendingDelivery(image: Record<string, unknown> | undefined): image is { id: string; partnerId: string } {
  return (
    image !== undefined &&
    image.entity === 'webhookDelivery' &&
    image.status === 'pending' &&
    image.attempts === 0 &&
    typeof image.id === 'string' &&
    typeof image.partnerId === 'string'
  );
}

/**
 * The stream relay's step for one new item: enqueue it, due at once, when it is a new pending delivery; any
 * other item is none of its business. Throws when the enqueue fails, so the stream retries the record.
 */
export async function relayNewDelivery(deps: Pick<OutboxDeps, 'deliveryQueue'>, image: Record<string, unknown> | undefined): Promise<boolean> {
  if (!isNewPendingDelivery(image)) return false;
  await deps.deliveryQueue.send({ deliveryId: image.id, partnerId: image.partnerId }, 0);
  return true;
}

export interface SweepOptions {
  now: Date;
  /**
   * The queue holds no message for any pending delivery (the local queue after a restart, or a purged SQS
   * queue): every pending delivery whose next attempt is due within SQS's longest delay is relayed now, delayed
   * until it is due (a delivery not yet attempted at once), rather than after its relay time, since no message
   * for it is on its way.
   */
  queueEmpty?: boolean;
}

export interface SweepResult {
  relayed: string[];
  /** Entries another sweep, or the consumer, changed between the read and the lease. */
  skipped: number;
  /** Entries whose enqueue failed: their lease was given back, so the next sweep tries again. */
  failed: Array<{ deliveryId: string; error: unknown }>;
}

/**
 * Steps, per page of due entries (oldest first over every partition of the outbox): with `queueEmpty`, read the
 * deliveries of the entries whose relay time has not come (the outbox lists keys only) to see which are due within a
 * queue's delay; lease the entry (one conditional update: still pending, its sort key unchanged, so only one sweep
 * wins it, and it answers with the delivery's partner); then enqueue its delivery, due at once (or when its attempt
 * is due); if the enqueue fails, give the lease back. The lease and the enqueue are not atomic: a sweep that dies
 * between them leaves the entry leased, and the sweep after the lease relays it.
 */
export async function sweepOutbox(deps: OutboxDeps, options: SweepOptions): Promise<SweepResult> {
  const now = options.now.toISOString();
  const leasedUntil = new Date(options.now.getTime() + SWEEP_LEASE_MS).toISOString();
  const result: SweepResult = { relayed: [], skipped: 0, failed: [] };
  const seen = new Set<string>();
  const nowMs = options.now.getTime();
  /** Seconds until the entry's next attempt may be claimed: its backoff over, and the lease of an attempt cut short ended (0: now). */
  const delayOf = (delivery: OutboxDelivery) =>
    Math.max(0, Math.ceil((Math.max(delivery.nextAttemptAt ?? 0, delivery.leaseUntil ?? 0) - nowMs) / 1000));

  const relay = async (entry: OutboxEntry, read: OutboxDelivery | undefined) => {
    const dueNow = entry.relayAfter <= now;
    const readDelay = dueNow || read === undefined ? 0 : delayOf(read);
    // The lease outlasts the delayed message's delay, so the next sweep does not send the entry again meanwhile.
    const leased = readDelay === 0 ? leasedUntil : new Date(nowMs + readDelay * 1000 + SWEEP_LEASE_MS).toISOString();
    const delivery = await deps.outbox.leaseOutboxEntry(entry, leased);
    if (delivery === undefined) {
      result.skipped += 1;
      return;
    }
    // As leased: an attempt claimed since the read (a claim may leave the key where it is) is waited out too.
    const delaySeconds = dueNow ? 0 : Math.min(MAX_DELAY_SECONDS, delayOf(delivery));
    try {
      await deps.deliveryQueue.send({ deliveryId: entry.deliveryId, partnerId: delivery.partnerId }, delaySeconds);
      result.relayed.push(entry.deliveryId);
    } catch (error) {
      result.failed.push({ deliveryId: entry.deliveryId, error });
      await deps.outbox.releaseOutboxLease(entry, leased).catch(() => false);
    }
  };

  // Every entry when the queue is empty (any due within SQS's longest delay is relayed, delayed), else the due ones.
  for await (const page of deps.outbox.outboxEntries(options.queueEmpty === true ? undefined : now)) {
    // A leased entry moves past the read position and may come round again in the same (unbounded) read.
    const fresh = page.filter((entry) => !seen.has(entry.deliveryId));
    const notYet = fresh.filter((entry) => entry.relayAfter > now);
    const read = options.queueEmpty === true && notYet.length > 0 ? await deps.outbox.pendingDeliveries(notYet.map((entry) => entry.deliveryId)) : new Map<string, OutboxDelivery>();
    const isDue = (entry: OutboxEntry) => {
      const delivery = read.get(entry.deliveryId);
      return entry.relayAfter <= now || (delivery !== undefined && delayOf(delivery) <= MAX_DELAY_SECONDS);
    };
    const due = fresh.filter(isDue).slice(0, SWEEP_MAX_ENTRIES - seen.size);
    for (const entry of due) seen.add(entry.deliveryId);
    await Promise.all(due.map((entry) => relay(entry, read.get(entry.deliveryId))));
    if (seen.size >= SWEEP_MAX_ENTRIES) break;
  }
  return result;
}
