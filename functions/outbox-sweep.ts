/**
 * The outbox sweep, the relay's safety net: enqueues every pending delivery whose relay time has passed (see
 * lib/use-cases/webhook-outbox.ts). In AWS an EventBridge rule runs it every minute; locally the runtime runs
 * it at start (with `detail.queueEmpty`, since the local queue starts empty) and every few seconds.
 *
 * Input: an EventBridge scheduled event. `{ "detail": { "queueEmpty": true } }` says no message is on its
 * way for any pending delivery (also for an operator who purged the queue): deliveries not yet attempted are
 * relayed without waiting out their relay grace.
 */
import type { Context } from 'aws-lambda';
import { outboxDeps } from '../lib/composition/outbox';
import { logger } from '../lib/observability';
import { type OutboxDeps, sweepOutbox } from '../lib/use-cases/webhook-outbox';

export interface OutboxSweepEvent {
  detail?: { queueEmpty?: boolean } | null;
}

/** The handler over given adapters and clock (tests inject them); `handler` uses the process's own. */
export const createHandler =
  (deps: OutboxDeps, now: () => Date = () => new Date()) =>
  async (event: OutboxSweepEvent, _context?: Context) => {
    const result = await sweepOutbox(deps, { now: now(), queueEmpty: event.detail?.queueEmpty === true });
    if (result.relayed.length > 0) logger.info('outbox sweep relayed deliveries', { relayed: result.relayed, skipped: result.skipped });
    if (result.failed.length > 0) {
      // Their leases were given back; failing the invocation makes the failure visible (errors metric, retry).
      logger.error('outbox sweep could not enqueue deliveries', { failed: result.failed.map((failure) => failure.deliveryId), error: result.failed[0]?.error });
      throw new Error(`outbox sweep: ${result.failed.length} deliveries could not be enqueued`);
    }
    return { relayed: result.relayed.length, skipped: result.skipped };
  };

export const handler = createHandler(outboxDeps);
