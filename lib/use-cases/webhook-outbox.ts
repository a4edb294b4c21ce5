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

/** A pending delivery as the outbox lists it (the store's sparse index: docs/data-model.md). */
export interface OutboxEntry {
  deliveryId: string;
  /** The delivery's partner (its message's group in the fair queue). */
  partnerId: string;
  /** The entry's sort key as read (`<relayAfter ISO>#<deliveryId>`): a lease is conditional on it. */
  sortKey: string;
  relayAfter: string;
  attempts: number;
  /** Epoch ms: when its next attempt is due (a retry's backoff), if it waits for one. */
  nextAttemptAt?: number | undefined;
  /** Epoch ms: an attempt is running on it until then (its lease), if one is. */
  leaseUntil?: number | undefined;
}

export interface OutboxDeps {
  outbox: {
    outboxEntries(upTo: string | undefined): AsyncIterable<OutboxEntry[]>;
    leaseOutboxEntry(entry: OutboxEntry, relayAfter: string): Promise<boolean>;
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
 * Steps, per page of due entries (oldest first): lease the entry (one conditional update: still pending, its
 * sort key unchanged, so only one sweep wins it), then enqueue its delivery, due at once; if the enqueue
 * fails, give the lease back. The lease and the enqueue are not atomic: a sweep that dies between them leaves
 * the entry leased, and the sweep after the lease relays it.
 */
export async function sweepOutbox(deps: OutboxDeps, options: SweepOptions): Promise<SweepResult> {
  const now = options.now.toISOString();
  const leasedUntil = new Date(options.now.getTime() + SWEEP_LEASE_MS).toISOString();
  const result: SweepResult = { relayed: [], skipped: 0, failed: [] };
  const seen = new Set<string>();
  const nowMs = options.now.getTime();
  /** Seconds until the entry's next attempt may be claimed: its backoff over, and the lease of an attempt cut short ended (0: now). */
  const delayOf = (entry: OutboxEntry) => Math.max(0, Math.ceil((Math.max(entry.nextAttemptAt ?? 0, entry.leaseUntil ?? 0) - nowMs) / 1000));
  const isDue = (entry: OutboxEntry) => entry.relayAfter <= now || (options.queueEmpty === true && delayOf(entry) <= MAX_DELAY_SECONDS);

  const relay = async (entry: OutboxEntry) => {
    const delaySeconds = entry.relayAfter <= now ? 0 : delayOf(entry);
    // The lease outlasts the delayed message's delay, so the next sweep does not send the entry again meanwhile.
    const leased = delaySeconds === 0 ? leasedUntil : new Date(nowMs + delaySeconds * 1000 + SWEEP_LEASE_MS).toISOString();
    if (!(await deps.outbox.leaseOutboxEntry(entry, leased))) {
      result.skipped += 1;
      return;
    }
    try {
      await deps.deliveryQueue.send({ deliveryId: entry.deliveryId, partnerId: entry.partnerId }, delaySeconds);
      result.relayed.push(entry.deliveryId);
    } catch (error) {
      result.failed.push({ deliveryId: entry.deliveryId, error });
      await deps.outbox.releaseOutboxLease(entry, leased).catch(() => false);
    }
  };

  // Every entry when the queue is empty (any due within SQS's longest delay is relayed, delayed), else the due ones.
  for await (const page of deps.outbox.outboxEntries(options.queueEmpty === true ? undefined : now)) {
    // A leased entry moves past the read position and may come round again in the same (unbounded) read.
    const due = page.filter((entry) => isDue(entry) && !seen.has(entry.deliveryId)).slice(0, SWEEP_MAX_ENTRIES - seen.size);
    for (const entry of due) seen.add(entry.deliveryId);
    await Promise.all(due.map(relay));
    if (seen.size >= SWEEP_MAX_ENTRIES) break;
  }
  return result;
}
