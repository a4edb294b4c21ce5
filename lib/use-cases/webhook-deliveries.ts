/**
 * Partner webhook deliveries (interface-spec.md Events; decisions.md §2, §8): one attempt per queue message,
 * up to {@link MAX_DELIVERY_ATTEMPTS} per delivery with backoff; the admin list and resend.
 *
 * The queue only says "look at delivery X"; the delivery's item in the table decides what happens, so a
 * duplicate, late or early message changes nothing. Every write that moves a delivery is conditional on what
 * was read, and every outcome is recorded together with its audit event in one transaction.
 */
import { type AuditEvent, type AuditEventType, newAuditEvent } from '../domain/audit';
import { errors } from '../domain/errors';
import { newId } from '../domain/ids';
import { isDelivered, MAX_DELIVERY_ATTEMPTS, retryDelayMs, type DeliveryStatus, type WebhookDelivery } from '../domain/webhooks';
import type { SealedSecret } from '../secrets/secret-box';
import * as deliveries from '../store/deliveries';
import type { Page } from '../store/paging';
import * as partners from '../store/partners';
import type * as endpoints from '../store/webhook-endpoints';
import type { WebhookSender } from '../webhooks/http-sender';
import { type DeliveryQueue, MAX_DELAY_SECONDS } from '../webhooks/queue';
import { webhookHeaders } from '../webhooks/signing';

/**
 * How long a claimed attempt holds its delivery: no other attempt can be claimed before it runs out. Longer
 * than an attempt can take (the 10 s request timeout and two DynamoDB writes), and than the consumer's
 * function timeout, so a lease only runs out under a consumer that has stopped.
 */
const ATTEMPT_LEASE_MS = 60_000;

/** A message may arrive this much before its attempt is due (a queue's delay and our clock differ a little). */
const DUE_TOLERANCE_MS = 500;


/** The adapters of the consumer, wired in `lib/adapters/`; tests build variants (fake queue, short timeout, clock). */
export interface WebhookDeliveryDeps {
  deliveries: Pick<typeof deliveries, 'getDelivery' | 'claimAttempt' | 'recordAttempt'>;
  endpoints: Pick<typeof endpoints, 'getWebhookEndpointWithSecret'>;
  /** Opens an endpoint's sealed secret (`secretBox.open`, purpose webhook): only to sign. */
  openSecret: (sealed: SealedSecret) => Promise<string>;
  queue: DeliveryQueue;
  send: WebhookSender;
  /** `WEBHOOK_RETRY_BASE_MS`. */
  retryBaseMs: number;
  /** Epoch milliseconds. */
  now: () => number;
  /** Uniform in [0, 1): the backoff's jitter. */
  random: () => number;
  /** Waits `ms` (the part of a backoff the queue's whole-second delay cannot express). */
  sleep: (ms: number) => Promise<void>;
}

/** A queue message may arrive this much before its retry is due: its delay is the backoff rounded down to seconds. */
const QUEUE_DELAY_GRANULARITY_MS = 1_000;

/** What one message did, for the consumer's log line and for tests. */
export type DeliveryStep =
  | { outcome: 'unknown' | 'finished' | 'not-due' | 'superseded' }
  | { outcome: 'succeeded'; attempt: number; httpStatus: number }
  | { outcome: 'retry-scheduled'; attempt: number; httpStatus: number | null; delaySeconds: number; enqueued: boolean }
  | { outcome: 'failed'; attempt: number; httpStatus: number | null; error: string };

const auditOf = (delivery: WebhookDelivery, type: AuditEventType, at: number, details: AuditEvent['details']): AuditEvent =>
  newAuditEvent(
    {
      type,
      partnerId: delivery.partnerId,
      resourceType: 'webhook_delivery',
      resourceId: delivery.id,
      details: { event_id: delivery.eventId, event: delivery.event, endpoint_id: delivery.endpointId, svc_tx_id: delivery.svcTxId, ...details },
    },
    new Date(at),
  );

/** `last_error` of an answer that is not a 2xx. */
const answerError = (httpStatus: number) =>
  httpStatus >= 300 && httpStatus <= 399 ? `HTTP ${httpStatus}: redirects are not followed` : `HTTP ${httpStatus}: not a 2xx answer`;

/**
 * Handles one queue message for a delivery. Steps:
 * 1. read the delivery (strongly consistent); unknown or finished: nothing to do (the message is acknowledged);
 * 2. a delivery that cannot be attempted is failed at once, with its audit event (atomic): its endpoint was
 *    deleted, or its last attempt was claimed but never reported back (the consumer stopped mid-attempt);
 * 3. open the endpoint's secret (before claiming, so an unavailable key costs no attempt);
 * 4. claim the next attempt (atomic, conditional: still pending, no attempt claimed since step 1, no lease
 *    running, backoff over); if another consumer has it or the message is early, stop here;
 * 5. POST the signed body (the URL is checked again, its resolved addresses pinned);
 * 6. record the outcome and its audit event (one transaction, conditional on this attempt being the current
 *    one): 2xx → succeeded; else failed after the last attempt, or pending with the next attempt's due time;
 * 7. schedule the next attempt: a queue message delayed by the backoff in whole seconds, rounded down (the
 *    consumer waits out the rest before step 4, so the backoff is exact). Were this process to stop between 6
 *    and 7, the outbox relay's sweep finds the delivery once that message is overdue and enqueues it again.
 * Errors of the table, the key or the queue are thrown: the message is retried, then dead-lettered.
 */
export async function deliverWebhook(deps: WebhookDeliveryDeps, deliveryId: string): Promise<DeliveryStep> {
  const delivery = await deps.deliveries.getDelivery(deliveryId);
  if (delivery === undefined) return { outcome: 'unknown' };
  if (delivery.status !== 'pending') return { outcome: 'finished' };
  // The backoff is exact to the millisecond: wait out what the queue's whole-second delay left of it.
  const early = (delivery.nextAttemptAt ?? 0) - deps.now();
  if (early > 0 && early <= QUEUE_DELAY_GRANULARITY_MS) await deps.sleep(early);

  const found = delivery.attempts >= MAX_DELIVERY_ATTEMPTS
    ? undefined
    : await deps.endpoints.getWebhookEndpointWithSecret(delivery.partnerId, delivery.endpointId);
  if (found === undefined) {
    const error = delivery.attempts >= MAX_DELIVERY_ATTEMPTS
      ? `Attempt ${delivery.attempts} was interrupted before its outcome was recorded`
      : 'The webhook endpoint was deleted';
    return failWithoutAttempt(deps, delivery, error);
  }

  const secret = await deps.openSecret(found.secret);
  const claimedAt = deps.now();
  const claimed = await deps.deliveries.claimAttempt(delivery, {
    now: claimedAt,
    dueBy: claimedAt + DUE_TOLERANCE_MS,
    leaseUntil: claimedAt + ATTEMPT_LEASE_MS,
  });
  if (!claimed) return { outcome: 'not-due' };
  const attempt = delivery.attempts + 1;

  const result = await deps.send({
    url: found.endpoint.url,
    headers: webhookHeaders(secret, { eventId: delivery.eventId, body: delivery.payload, timestamp: Math.floor(deps.now() / 1000) }),
    body: delivery.payload,
  });

  const now = deps.now();
  const claimedDelivery = { id: delivery.id, attempts: attempt };
  const httpStatus = 'httpStatus' in result ? result.httpStatus : null;
  if (httpStatus !== null && isDelivered(httpStatus)) {
    const audit = auditOf(delivery, 'webhook_delivery.succeeded', now, { attempt, http_status: httpStatus });
    const recorded = await deps.deliveries.recordAttempt(claimedDelivery, { status: 'succeeded', httpStatus }, audit, { now });
    return recorded ? { outcome: 'succeeded', attempt, httpStatus } : { outcome: 'superseded' };
  }

  const error = 'error' in result ? result.error : answerError(httpStatus ?? 0);
  if (attempt >= MAX_DELIVERY_ATTEMPTS) {
    const audit = auditOf(delivery, 'webhook_delivery.failed', now, { attempt, http_status: httpStatus, error });
    const recorded = await deps.deliveries.recordAttempt(claimedDelivery, { status: 'failed', httpStatus, error }, audit, { now });
    return recorded ? { outcome: 'failed', attempt, httpStatus, error } : { outcome: 'superseded' };
  }

  const delayMs = retryDelayMs(attempt, deps.retryBaseMs, deps.random());
  const nextAttemptAt = now + delayMs;
  const delaySeconds = Math.floor(delayMs / 1000);
  const audit = auditOf(delivery, 'webhook_delivery.attempt_failed', now, {
    attempt,
    http_status: httpStatus,
    error,
    next_attempt_at: new Date(nextAttemptAt).toISOString(),
  });
  const recorded = await deps.deliveries.recordAttempt(claimedDelivery, { status: 'pending', httpStatus, error, nextAttemptAt }, audit, { now });
  if (!recorded) return { outcome: 'superseded' };
  // Sent only after the outcome is recorded, so the message can never arrive before its attempt is claimable.
  // A backoff longer than a queue message can be delayed is left to the outbox relay's sweep.
  const enqueued = delaySeconds <= MAX_DELAY_SECONDS;
  if (enqueued) await deps.queue.send({ deliveryId: delivery.id }, delaySeconds);
  return { outcome: 'retry-scheduled', attempt, httpStatus, delaySeconds, enqueued };
}

/** Fails a pending delivery that no attempt is running on, without an attempt (step 2 above). */
async function failWithoutAttempt(deps: WebhookDeliveryDeps, delivery: WebhookDelivery, error: string): Promise<DeliveryStep> {
  const now = deps.now();
  const httpStatus = delivery.lastHttpStatus;
  const audit = auditOf(delivery, 'webhook_delivery.failed', now, { attempt: delivery.attempts, http_status: httpStatus, error });
  const recorded = await deps.deliveries.recordAttempt(delivery, { status: 'failed', httpStatus, error }, audit, { now, withoutLease: true });
  return recorded ? { outcome: 'failed', attempt: delivery.attempts, httpStatus, error } : { outcome: 'not-due' };
}

/** A partner's deliveries, newest first (404 PARTNER_NOT_FOUND for an unknown partner). */
export async function listPartnerDeliveries(
  partnerId: string,
  page: { status?: DeliveryStatus | undefined; limit: number; cursor?: string | undefined },
): Promise<Page<WebhookDelivery>> {
  if ((await partners.getPartner(partnerId)) === undefined) throw errors.partnerNotFound();
  return deliveries.listDeliveries(partnerId, page);
}

/**
 * Resends a delivery: a new delivery of the same event (same event id, same body byte for byte) to the same
 * endpoint, pending with no attempts, written with its audit event in one transaction that also requires the
 * endpoint to still exist (409 WEBHOOK_ENDPOINT_DELETED). The outbox relay enqueues it like any new delivery.
 * Any delivery may be resent, whatever its status: the partner deduplicates by event id.
 */
export async function resendDelivery(deliveryId: string): Promise<WebhookDelivery> {
  const original = await deliveries.getDelivery(deliveryId);
  if (original === undefined) throw errors.webhookDeliveryNotFound();
  const now = new Date().toISOString();
  const resent: WebhookDelivery = {
    ...original,
    id: newId.webhookDelivery(),
    status: 'pending',
    attempts: 0,
    lastHttpStatus: null,
    lastError: null,
    nextAttemptAt: undefined, // the original's backoff is not the resend's: it is due at once
    createdAt: now,
    updatedAt: now,
  };
  const audit = auditOf(resent, 'webhook_delivery.resent', Date.parse(now), { resent_from: original.id });
  await deliveries.putResentDelivery(resent, audit);
  return resent;
}
