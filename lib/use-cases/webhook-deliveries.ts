/**
 * Partner webhook deliveries (interface-spec.md Events; decisions.md §2, §8): one attempt per queue message,
 * up to {@link MAX_DELIVERY_ATTEMPTS} per delivery with backoff; the admin list and resend.
 *
 * The queue only says "look at delivery X"; the delivery's item in the table decides what happens, so a
 * duplicate, late or early message changes nothing. Every write that moves a delivery is conditional on what
 * was read, and every outcome is recorded together with its audit event in one transaction.
 */
import { type AuditEvent, type AuditEventType, newAuditEvent } from '../domain/audit';
import { admit, afterAttempt, type BreakerSettings, type BreakerState, isClosed, startProbe, withoutProbe } from '../domain/endpoint-breaker';
import { errors } from '../domain/errors';
import { newId } from '../domain/ids';
import { isDelivered, MAX_DELIVERY_ATTEMPTS, retryDelayMs, type DeliveryStatus, type WebhookDelivery, type WebhookEndpoint } from '../domain/webhooks';
import type { SealedSecret } from '../secrets/secret-box';
import * as deliveries from '../store/deliveries';
import { DEFERRAL_MARGIN_MS } from '../store/deliveries';
import type { Page } from '../store/paging';
import * as partners from '../store/partners';
import * as webhookEndpoints from '../store/webhook-endpoints';
import type { StoredBreaker } from '../store/webhook-endpoints';
import type { WebhookSender } from '../webhooks/http-sender';
import { type DeliveryMessage, type DeliveryQueue, MAX_DELAY_SECONDS, type WaitingDelivery } from '../webhooks/queue';
import { webhookHeaders } from '../webhooks/signing';

/**
 * How long a claimed attempt holds its delivery: no other attempt can be claimed before it runs out. Longer
 * than an attempt can take (the 10 s request timeout and two DynamoDB writes), and than the consumer's
 * function timeout, so a lease only runs out under a consumer that has stopped.
 */
const ATTEMPT_LEASE_MS = 60_000;

/** A message may arrive this much before its attempt is due (a queue's delay and our clock differ a little). */
const DUE_TOLERANCE_MS = 500;


/** An endpoint with its sealed secret and breaker, as the consumer reads it (`undefined`: deleted). */
export interface EndpointStore {
  getWebhookEndpointWithSecret(partnerId: string, endpointId: string): Promise<{ endpoint: WebhookEndpoint; secret: SealedSecret; breaker: StoredBreaker } | undefined>;
  /**
   * For the waiting messages this process hands over at a cool-down's end: the first goes on to claim the probe
   * (`true`: it is the one), and the others, until `until`, are deferred on it unread (`false`). Without it (a
   * store with no cache), every one goes on to read.
   */
  firstToProbe?(partnerId: string, endpointId: string, now: number, until: number): boolean;
}

/** Endpoints' circuit breakers, kept on their items (conditional on the revision read). */
export interface BreakerStore {
  getBreaker(partnerId: string, endpointId: string): Promise<StoredBreaker | undefined>;
  putBreaker(partnerId: string, endpointId: string, state: BreakerState, readRevision: number): Promise<boolean>;
}

/** The adapters of the consumer, wired in `lib/adapters/`; tests build variants (fake queue, short timeout, clock). */
export interface WebhookDeliveryDeps {
  deliveries: Pick<typeof deliveries, 'getDelivery' | 'claimAttempt' | 'recordAttempt' | 'deferDelivery'>;
  endpoints: EndpointStore;
  breakers: BreakerStore;
  /** The breakers' timings (`breakerSettings` of the sender's timeout). */
  breakerSettings: BreakerSettings;
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

/**
 * How long a delivery may wait on its endpoint's open breaker, counted from its creation: past this it is
 * failed without a further attempt (recorded and audited, left for resend), as after its last attempt.
 */
export const MAX_BREAKER_WAIT_MS = 24 * 60 * 60_000;

/**
 * What the attempt did to its endpoint's breaker (for the consumer's metrics): `recovering` is an answered probe of
 * an endpoint that needs more in a row before it closes.
 */
export type BreakerChange = 'opened' | 'closed' | 'recovering' | 'unchanged' | 'not-recorded';

/** What one message did, for the consumer's log line and for tests. */
export type DeliveryStep =
  | { outcome: 'unknown' | 'finished' | 'not-due' | 'superseded' }
  /** `read`: whether the delivery's item was read (a message that deferred it before may defer it again unread). */
  | { outcome: 'deferred'; reason: 'open' | 'probing'; until: number; read: boolean }
  | { outcome: 'succeeded'; attempt: number; httpStatus: number; probe: boolean; breaker: BreakerChange }
  | { outcome: 'retry-scheduled'; attempt: number; httpStatus: number | null; delaySeconds: number; enqueued: boolean; probe: boolean; breaker: BreakerChange }
  | { outcome: 'failed'; attempt: number; httpStatus: number | null; error: string; probe?: boolean; breaker?: BreakerChange };

/** The breaker's say on this message: attempt (as the probe, or freely), or defer. */
type Gate =
  | { kind: 'attempt'; probe: boolean; breaker: StoredBreaker }
  | { kind: 'defer'; until: number; spreadMs: number; reason: 'open' | 'probing' };

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
 * 3. ask the endpoint's circuit breaker (lib/domain/endpoint-breaker.ts): closed, go on; probing with no probe
 *    running, go on as the probe if this consumer wins the probe's lease (a conditional write); open, or a
 *    probe running: defer the delivery (attempt count unchanged, next attempt due later, a delayed message),
 *    and stop; a delivery that has waited on the breaker for {@link MAX_BREAKER_WAIT_MS} is failed instead;
 * 4. open the endpoint's secret (before claiming, so an unavailable key costs no attempt);
 * 5. claim the next attempt (atomic, conditional: still pending, no attempt claimed since step 1, no lease
 *    running, backoff over); if another consumer has it or the message is early, stop here (giving back a
 *    probe's lease);
 * 6. POST the signed body (the URL is checked again, its resolved addresses pinned);
 * 7. record the outcome and its audit event (one transaction, conditional on this attempt being the current
 *    one): 2xx → succeeded; else failed after the last attempt, or pending with the next attempt's due time;
 *    then the breaker's new state (an answer closes it, a timeout opens it: conditional on its revision, read
 *    again on a conflict; a failure to write it is reported in the step, not thrown, as the attempt is recorded);
 * 8. schedule the next attempt: a queue message delayed by the backoff in whole seconds, rounded down (the
 *    consumer waits out the rest before step 5, so the backoff is exact). Were this process to stop between 7
 *    and 8, the outbox relay's sweep finds the delivery once that message is overdue and enqueues it again.
 * Errors of the table, the key or the queue are thrown: the message is retried, then dead-lettered.
 */
export async function deliverWebhook(deps: WebhookDeliveryDeps, message: { deliveryId: string; partnerId?: string; waiting?: WaitingDelivery }): Promise<DeliveryStep> {
  if (message.partnerId !== undefined && message.waiting !== undefined) {
    const step = await deferStillWaiting(deps, { deliveryId: message.deliveryId, partnerId: message.partnerId, waiting: message.waiting });
    if (step !== undefined) return step;
  }
  const delivery = await deps.deliveries.getDelivery(message.deliveryId);
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

  const gate = await passBreaker(deps, delivery, found.breaker);
  if (gate.kind === 'defer') return deferOnBreaker(deps, delivery, gate);

  const secret = await deps.openSecret(found.secret);
  const claimedAt = deps.now();
  const claimed = await deps.deliveries.claimAttempt(delivery, {
    now: claimedAt,
    dueBy: claimedAt + DUE_TOLERANCE_MS,
    leaseUntil: claimedAt + ATTEMPT_LEASE_MS,
  });
  if (!claimed) {
    if (gate.probe) await deps.breakers.putBreaker(delivery.partnerId, delivery.endpointId, withoutProbe(gate.breaker.state), gate.breaker.revision);
    return { outcome: 'not-due' };
  }
  const attempt = delivery.attempts + 1;

  const result = await deps.send({
    url: found.endpoint.url,
    headers: webhookHeaders(secret, { eventId: delivery.eventId, body: delivery.payload, timestamp: Math.floor(deps.now() / 1000) }),
    body: delivery.payload,
  });

  const now = deps.now();
  const claimedDelivery = { id: delivery.id, attempts: attempt };
  const httpStatus = 'httpStatus' in result ? result.httpStatus : null;
  const timedOut = 'timedOut' in result && result.timedOut === true;
  const probe = gate.probe;
  const updateBreaker = () => recordOnBreaker(deps, delivery, gate.breaker, { probe, timedOut, startedAt: claimedAt });
  if (httpStatus !== null && isDelivered(httpStatus)) {
    const audit = auditOf(delivery, 'webhook_delivery.succeeded', now, { attempt, http_status: httpStatus });
    const recorded = await deps.deliveries.recordAttempt(claimedDelivery, { status: 'succeeded', httpStatus }, audit, { now });
    return recorded ? { outcome: 'succeeded', attempt, httpStatus, probe, breaker: await updateBreaker() } : { outcome: 'superseded' };
  }

  const error = 'error' in result ? result.error : answerError(httpStatus ?? 0);
  if (attempt >= MAX_DELIVERY_ATTEMPTS) {
    const audit = auditOf(delivery, 'webhook_delivery.failed', now, { attempt, http_status: httpStatus, error });
    const recorded = await deps.deliveries.recordAttempt(claimedDelivery, { status: 'failed', httpStatus, error }, audit, { now });
    return recorded ? { outcome: 'failed', attempt, httpStatus, error, probe, breaker: await updateBreaker() } : { outcome: 'superseded' };
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
  const breaker = await updateBreaker();
  // Sent only after the outcome is recorded, so the message can never arrive before its attempt is claimable.
  // A backoff longer than a queue message can be delayed is left to the outbox relay's sweep.
  const enqueued = delaySeconds <= MAX_DELAY_SECONDS;
  if (enqueued) await deps.queue.send({ deliveryId: delivery.id, partnerId: delivery.partnerId }, delaySeconds);
  return { outcome: 'retry-scheduled', attempt, httpStatus, delaySeconds, enqueued, probe, breaker };
}

/** How many times a breaker decision is read again after losing a conditional write to another consumer. */
const BREAKER_WRITE_TRIES = 3;

/**
 * Step 3: the breaker's decision for this delivery. To go as the probe, this consumer must win the probe's
 * lease (a write conditional on the breaker's revision); losing it, it reads the breaker again and decides
 * again (another consumer's probe is now running: defer).
 */
async function passBreaker(deps: WebhookDeliveryDeps, delivery: WebhookDelivery, read: StoredBreaker): Promise<Gate> {
  let breaker: StoredBreaker | undefined = read;
  for (let tries = 0; breaker !== undefined && tries < BREAKER_WRITE_TRIES; tries += 1) {
    const now = deps.now();
    const admission = admit(breaker.state, now, deps.breakerSettings);
    if (admission.kind === 'attempt') return { kind: 'attempt', probe: false, breaker };
    if (admission.kind === 'defer') return admission;
    const probing = startProbe(breaker.state, now, deps.breakerSettings);
    if (await deps.breakers.putBreaker(delivery.partnerId, delivery.endpointId, probing, breaker.revision)) {
      return { kind: 'attempt', probe: true, breaker: { state: probing, revision: breaker.revision + 1 } };
    }
    breaker = await deps.breakers.getBreaker(delivery.partnerId, delivery.endpointId);
  }
  // Lost every race (or the endpoint was deleted meanwhile: the next look fails the delivery): look again soon.
  return { kind: 'defer', until: deps.now() + deps.breakerSettings.youngProbeMs, spreadMs: deps.breakerSettings.youngProbeMs, reason: 'probing' };
}

/**
 * Step 3, deferring: the delivery's next attempt is due a little after the breaker's `until` (jittered, so the
 * deliveries waiting on one endpoint do not come back at one moment; at most 15 minutes, SQS's longest delay),
 * by a write conditional on the delivery being as read when its outbox key must move, then a message delayed
 * until then.
 * A delivery that has waited on the breaker past {@link MAX_BREAKER_WAIT_MS} is failed instead.
 */
async function deferOnBreaker(deps: WebhookDeliveryDeps, delivery: WebhookDelivery, gate: Extract<Gate, { kind: 'defer' }>): Promise<DeliveryStep> {
  const now = deps.now();
  if (now - Date.parse(delivery.createdAt) > MAX_BREAKER_WAIT_MS) {
    return failWithoutAttempt(deps, delivery, `Not attempted again: the endpoint kept timing out, its circuit breaker open for over ${MAX_BREAKER_WAIT_MS / 3_600_000} h`);
  }
  // At most SQS's longest delay: the delayed message carries every deferral, never the sweep.
  const until = deferralEnd(deps, gate, now);
  const relayAfter = await deps.deliveries.deferDelivery(delivery, { now, until });
  if (relayAfter === undefined) return { outcome: 'not-due' };
  const waiting: WaitingDelivery = { endpointId: delivery.endpointId, createdAt: delivery.createdAt, relayAfter };
  await deps.queue.send({ deliveryId: delivery.id, partnerId: delivery.partnerId, waiting }, Math.ceil((until - now) / 1000));
  return { outcome: 'deferred', reason: gate.reason, until, read: true };
}

/**
 * Step 0, for a message that deferred its delivery before (it says which endpoint, since when, and the outbox
 * key then): if the endpoint's breaker (as cached) still defers it, and the new deferral ends well before that
 * key, the message is sent again, delayed, and nothing is read or written. A dead endpoint's waiting deliveries
 * thus cost a message each per cool-down, and no DynamoDB capacity. Anything else (the breaker lets it go, the
 * endpoint is gone, the deferral would pass the key, 24 h are up): `undefined`, and the delivery is read as usual.
 * Never attempts: a delivery is attempted only after its item is read and its attempt claimed.
 */
async function deferStillWaiting(deps: WebhookDeliveryDeps, message: Required<Pick<DeliveryMessage, 'deliveryId' | 'partnerId' | 'waiting'>>): Promise<DeliveryStep | undefined> {
  const { waiting } = message;
  const now = deps.now();
  if (now - Date.parse(waiting.createdAt) > MAX_BREAKER_WAIT_MS) return undefined;
  const found = await deps.endpoints.getWebhookEndpointWithSecret(message.partnerId, waiting.endpointId);
  if (found === undefined) return undefined;
  const admitted = admit(found.breaker.state, now, deps.breakerSettings);
  if (admitted.kind === 'attempt') return undefined;
  // At a cool-down's end one waiting message of this process goes on to claim the probe; the others wait on it,
  // as on a young probe, rather than each reading its delivery and racing for the probe's lease.
  const youngProbeMs = deps.breakerSettings.youngProbeMs;
  const gate =
    admitted.kind === 'defer'
      ? admitted
      : deps.endpoints.firstToProbe?.(message.partnerId, waiting.endpointId, now, now + youngProbeMs) !== false
        ? undefined
        : { until: now + youngProbeMs, spreadMs: youngProbeMs / 2, reason: 'probing' as const };
  if (gate === undefined) return undefined;
  const until = deferralEnd(deps, gate, now);
  if (until + DEFERRAL_MARGIN_MS > waiting.relayAfter) return undefined;
  await deps.queue.send(message, Math.ceil((until - now) / 1000));
  return { outcome: 'deferred', reason: gate.reason, until, read: false };
}

/** When a deferral ends: a little after the breaker's `until` (jittered), at most SQS's longest delay from now. */
const deferralEnd = (deps: WebhookDeliveryDeps, gate: { until: number; spreadMs: number }, now: number) =>
  Math.min(Math.max(now, gate.until) + Math.round(deps.random() * gate.spreadMs), now + MAX_DELAY_SECONDS * 1000);

/**
 * Step 7's breaker part: its state after this attempt, written conditional on the revision read; on a conflict
 * read again (this attempt still counts as the probe only while its probe is the one on record). Never throws:
 * the attempt is already recorded, and a breaker not updated only costs an attempt or a deferral.
 */
async function recordOnBreaker(
  deps: WebhookDeliveryDeps,
  delivery: WebhookDelivery,
  read: StoredBreaker,
  attempt: { probe: boolean; timedOut: boolean; startedAt: number },
): Promise<BreakerChange> {
  try {
    let breaker: StoredBreaker | undefined = read;
    for (let tries = 0; breaker !== undefined && tries < BREAKER_WRITE_TRIES; tries += 1) {
      const probe = attempt.probe && breaker.state.probeStartedAt === read.state.probeStartedAt;
      const next = afterAttempt(breaker.state, { ...attempt, probe }, deps.now(), deps.breakerSettings);
      if (next === undefined) return 'unchanged';
      if (await deps.breakers.putBreaker(delivery.partnerId, delivery.endpointId, next, breaker.revision)) {
        return attempt.timedOut ? 'opened' : isClosed(next) ? 'closed' : 'recovering';
      }
      breaker = await deps.breakers.getBreaker(delivery.partnerId, delivery.endpointId);
    }
    return breaker === undefined ? 'unchanged' : 'not-recorded';
  } catch {
    return 'not-recorded';
  }
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
 *
 * A resend is what an operator does once the endpoint is fixed, so an open breaker ends its cool-down now: the
 * resent delivery goes as the next probe instead of waiting up to 15 minutes (a write conditional on the breaker's
 * revision; one lost to a consumer's own write is left to that consumer).
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
    leaseUntil: undefined,
    relayAfter: undefined,
    createdAt: now,
    updatedAt: now,
  };
  const audit = auditOf(resent, 'webhook_delivery.resent', Date.parse(now), { resent_from: original.id });
  await deliveries.putResentDelivery(resent, audit);
  const breaker = await webhookEndpoints.getBreaker(resent.partnerId, resent.endpointId);
  if (breaker !== undefined && breaker.state.openUntil > Date.parse(now)) {
    await webhookEndpoints.putBreaker(resent.partnerId, resent.endpointId, { ...breaker.state, openUntil: Date.parse(now) }, breaker.revision);
  }
  return resent;
}
