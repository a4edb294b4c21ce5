/**
 * Partner webhook deliveries (interface-spec.md Events; decisions.md §2, §8): one attempt per queue message,
 * up to {@link MAX_DELIVERY_ATTEMPTS} per delivery with backoff; the admin list and resend.
 *
 * The queue only says "look at delivery X"; the delivery's item in the table decides what happens, so a
 * duplicate, late or early message changes nothing. Every write that moves a delivery is conditional on what
 * was read, and every outcome is recorded together with its audit event in one transaction.
 */
import { type AuditEvent, type AuditEventType, newAuditEvent } from '../domain/audit';
import {
  admit,
  afterAttempt,
  type AttemptOutcome,
  type BreakerSettings,
  type BreakerState,
  freeCapacityOf,
  giveBackLease,
  isClosed,
  SLOW_ANSWER_MS,
  type StoredBreaker,
  takeLease,
} from '../domain/endpoint-breaker';
import { errors } from '../domain/errors';
import { newId } from '../domain/ids';
import type { Page } from '../domain/page';
import {
  ATTEMPT_LEASE_MS,
  type AttemptRecord,
  type DeliveryStatus,
  isDelivered,
  MAX_DELIVERY_ATTEMPTS,
  retryDelayMs,
  type WebhookDelivery,
  type WebhookEndpoint,
} from '../domain/webhooks';
import type { SealedSecret } from '../domain/sealed-secret';
import { type DeliveryQueue, MAX_DELAY_SECONDS } from '../webhooks/queue';
import { webhookHeaders } from '../webhooks/signing';
import type { PartnerReader } from './ports/partner-readers';
import type { WebhookSender } from './ports/webhook-sender';

/** A message may arrive this much before its attempt is due (a queue's delay and our clock differ a little). */
const DUE_TOLERANCE_MS = 500;

/**
 * How stale an {@link EndpointStore}'s answer may be: a cache of the endpoint's item (one per Lambda container) keeps
 * it at most this long. A delivery parked on a breaker as cached that closed meanwhile is woken by the wake the
 * close sends this long (and a second more) after the close.
 */
export const ENDPOINT_STALENESS_MS = 1_000;

/** An endpoint with its sealed secret and breaker, as the consumer reads it (`undefined`: deleted). */
export interface EndpointStore {
  getWebhookEndpointWithSecret(partnerId: string, endpointId: string): Promise<{ endpoint: WebhookEndpoint; secret: SealedSecret; breaker: StoredBreaker } | undefined>;
}

/** Endpoints' circuit breakers, kept on their items (conditional on the revision read). */
export interface BreakerStore {
  getBreaker(partnerId: string, endpointId: string): Promise<StoredBreaker | undefined>;
  putBreaker(partnerId: string, endpointId: string, state: BreakerState, readRevision: number): Promise<boolean>;
}

/** The deliveries as the consumer reads and moves them, every write conditional on the delivery as read (`lib/store/deliveries.ts`). */
export interface DeliveryStore {
  /** Strongly consistent. */
  getDelivery(deliveryId: string): Promise<WebhookDelivery | undefined>;
  /**
   * Claims attempt `attempts + 1`: `false` when another has it, a lease runs or the backoff is not over by `dueBy`.
   * Its outbox key (`relayAfter`, as read) moves past the lease only if it does not lie just past it already.
   */
  claimAttempt(delivery: Pick<WebhookDelivery, 'id' | 'attempts' | 'relayAfter'>, at: { now: number; dueBy: number; leaseUntil: number }): Promise<boolean>;
  /** Records the outcome of the attempt that brought it to `attempts`, with its audit event, in one write. */
  recordAttempt(delivery: Pick<WebhookDelivery, 'id' | 'attempts'>, record: AttemptRecord, audit: AuditEvent, at: { now: number; withoutLease?: boolean }): Promise<boolean>;
  /** Parks it in its endpoint's parked index, its outbox key at `relayAfter`: `false` when it moved or an attempt runs. */
  parkDelivery(
    delivery: Pick<WebhookDelivery, 'id' | 'endpointId' | 'createdAt' | 'attempts' | 'leaseUntil' | 'relayAfter' | 'parked'>,
    at: { now: number; relayAfter: number },
  ): Promise<boolean>;
  /** Up to `limit` deliveries parked on an endpoint, longest-waiting first. */
  parkedDeliveries(endpointId: string, limit: number): Promise<Array<{ deliveryId: string; createdAt: string }>>;
  /** Takes it out of the parked index: `true` for the one caller that did. */
  unparkDelivery(deliveryId: string, endpointId: string): Promise<boolean>;
}

/** The adapters of the consumer, wired in `lib/composition/`; tests build variants (fake queue, short timeout, clock). */
export interface WebhookDeliveryDeps {
  deliveries: DeliveryStore;
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
  /** Uniform in [0, 1): the backoff's and the park's jitter. */
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
 * an endpoint that needs more in a row before it closes; `slow` and `fast`, a closed endpoint's answers crossing
 * {@link SLOW_ANSWER_MS}.
 */
export type BreakerChange = 'opened' | 'closed' | 'recovering' | 'slow' | 'fast' | 'unchanged' | 'not-recorded';

/** What one message did, for the consumer's log line and for tests. */
export type DeliveryStep =
  | { outcome: 'unknown' | 'finished' | 'not-due' | 'superseded' }
  /** Parked on its endpoint: `open` until `until`, or `busy` (every lease taken). */
  | { outcome: 'parked'; reason: 'open' | 'busy'; until: number }
  /** Not parked, or taken out again at once: its own message comes back at `until`. */
  | { outcome: 'deferred'; until: number }
  | { outcome: 'succeeded'; attempt: number; httpStatus: number; probe: boolean; breaker: BreakerChange }
  | { outcome: 'retry-scheduled'; attempt: number; httpStatus: number | null; delaySeconds: number; enqueued: boolean; probe: boolean; breaker: BreakerChange }
  | { outcome: 'failed'; attempt: number; httpStatus: number | null; error: string; probe?: boolean; breaker?: BreakerChange };

/** The breaker's say on this message: attempt (under a lease, or freely), or park. */
type Gate =
  | { kind: 'attempt'; probe: boolean; lease?: number; breaker: StoredBreaker }
  | { kind: 'park'; reason: 'open' | 'busy'; until: number };

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
 * 3. ask the endpoint's breaker (lib/domain/endpoint-breaker.ts): closed and fast, go on; a lease free (a probe, or
 *    an attempt to a slow endpoint), go on if this consumer wins it (a conditional write); open, or every lease
 *    taken: park the delivery (attempt count unchanged, no message: it is woken when the endpoint can take it,
 *    {@link wakeEndpoint}), and stop; a delivery that has waited on the breaker for {@link MAX_BREAKER_WAIT_MS} is
 *    failed instead;
 * 4. open the endpoint's secret (before claiming, so an unavailable key costs no attempt);
 * 5. claim the next attempt (atomic, conditional: still pending, no attempt claimed since step 1, no lease
 *    running, backoff over); if another consumer has it or the message is early, stop here (giving back the
 *    endpoint's lease);
 * 6. POST the signed body (the URL is checked again, its resolved addresses pinned);
 * 7. record the outcome and its audit event (one transaction, conditional on this attempt being the current
 *    one): 2xx → succeeded; else failed after the last attempt, or pending with the next attempt's due time;
 *    then the breaker's new state (the lease given back; an answer closes it or marks it slow or fast, a timeout
 *    opens it: conditional on its revision, read again on a conflict; a failure to write it is reported in the
 *    step, not thrown, as the attempt is recorded), and a wake message for the endpoint's parked deliveries when
 *    it can take more (at once), or once its cool-down ends (delayed);
 * 8. schedule the next attempt: a queue message delayed by the backoff in whole seconds, rounded down (the
 *    consumer waits out the rest before step 5, so the backoff is exact). Were this process to stop between 7
 *    and 8, the outbox relay's sweep finds the delivery once that message is overdue and enqueues it again.
 * Errors of the table, the key or the queue are thrown: the message is retried, then dead-lettered.
 */
export async function deliverWebhook(deps: WebhookDeliveryDeps, message: { deliveryId: string }): Promise<DeliveryStep> {
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
  if (gate.kind === 'park') return parkOnBreaker(deps, delivery, gate);

  const secret = await deps.openSecret(found.secret);
  const claimedAt = deps.now();
  const claimed = await deps.deliveries.claimAttempt(delivery, {
    now: claimedAt,
    dueBy: claimedAt + DUE_TOLERANCE_MS,
    leaseUntil: claimedAt + ATTEMPT_LEASE_MS,
  });
  if (!claimed) {
    const { lease } = gate;
    if (lease !== undefined) {
      await updateBreaker(deps, delivery, gate.breaker, (state) => giveBackLease(state, lease));
      await sendWake(deps, delivery, deps.now());
    }
    return { outcome: 'not-due' };
  }
  const attempt = delivery.attempts + 1;

  const headers = webhookHeaders(secret, { eventId: delivery.eventId, body: delivery.payload, timestamp: Math.floor(deps.now() / 1000) });
  // The endpoint's time is the request's alone: a slow claim (the table, this process) must not make it look slow.
  const sentAt = deps.now();
  const result = await deps.send({ url: found.endpoint.url, headers, body: delivery.payload });

  const now = deps.now();
  const claimedDelivery = { id: delivery.id, attempts: attempt };
  const httpStatus = 'httpStatus' in result ? result.httpStatus : null;
  const outcome: AttemptOutcome = { lease: gate.lease, timedOut: 'timedOut' in result && result.timedOut === true, startedAt: claimedAt, tookMs: now - sentAt };
  const probe = gate.probe;
  const updateBreakerAfter = () => recordOnBreaker(deps, delivery, gate.breaker, outcome);
  if (httpStatus !== null && isDelivered(httpStatus)) {
    const audit = auditOf(delivery, 'webhook_delivery.succeeded', now, { attempt, http_status: httpStatus });
    const recorded = await deps.deliveries.recordAttempt(claimedDelivery, { status: 'succeeded', httpStatus }, audit, { now });
    return recorded ? { outcome: 'succeeded', attempt, httpStatus, probe, breaker: await updateBreakerAfter() } : { outcome: 'superseded' };
  }

  const error = 'error' in result ? result.error : answerError(httpStatus ?? 0);
  if (attempt >= MAX_DELIVERY_ATTEMPTS) {
    const audit = auditOf(delivery, 'webhook_delivery.failed', now, { attempt, http_status: httpStatus, error });
    const recorded = await deps.deliveries.recordAttempt(claimedDelivery, { status: 'failed', httpStatus, error }, audit, { now });
    return recorded ? { outcome: 'failed', attempt, httpStatus, error, probe, breaker: await updateBreakerAfter() } : { outcome: 'superseded' };
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
  const breaker = await updateBreakerAfter();
  // Sent only after the outcome is recorded, so the message can never arrive before its attempt is claimable.
  // A backoff longer than a queue message can be delayed is left to the outbox relay's sweep.
  const enqueued = delaySeconds <= MAX_DELAY_SECONDS;
  if (enqueued) await deps.queue.send({ deliveryId: delivery.id, partnerId: delivery.partnerId }, delaySeconds);
  return { outcome: 'retry-scheduled', attempt, httpStatus, delaySeconds, enqueued, probe, breaker };
}

/** How many times a breaker decision is read again after losing a conditional write to another consumer. */
const BREAKER_WRITE_TRIES = 3;

/**
 * Step 3: the breaker's decision for this delivery. To go under a lease, this consumer must win it (a write
 * conditional on the breaker's revision); losing it, it reads the breaker again and decides again.
 */
async function passBreaker(deps: WebhookDeliveryDeps, delivery: WebhookDelivery, read: StoredBreaker): Promise<Gate> {
  let breaker: StoredBreaker | undefined = read;
  for (let tries = 0; breaker !== undefined && tries < BREAKER_WRITE_TRIES; tries += 1) {
    const now = deps.now();
    const admission = admit(breaker.state, now);
    if (admission.kind === 'attempt') return { kind: 'attempt', probe: false, breaker };
    if (admission.kind === 'park') return admission;
    const taken = takeLease(breaker.state, now, deps.breakerSettings);
    if (await deps.breakers.putBreaker(delivery.partnerId, delivery.endpointId, taken.state, breaker.revision)) {
      return { kind: 'attempt', probe: admission.probe, lease: taken.lease, breaker: { state: taken.state, revision: breaker.revision + 1 } };
    }
    breaker = await deps.breakers.getBreaker(delivery.partnerId, delivery.endpointId);
  }
  // Lost every race (or the endpoint was deleted meanwhile: the next look fails the delivery): park, and look again.
  return { kind: 'park', reason: 'busy', until: deps.now() };
}

/**
 * How long past its 24 h a parked delivery's outbox key lies (jittered up to as long again): the sweep is the
 * backstop of the wakes, and a delivery parked on an open breaker is failed at 24 h by a wake before that.
 */
const PARK_BACKSTOP_MS = 60 * 60_000;

/**
 * Step 3, parking: the delivery waits in its endpoint's parked index, with no message (a write conditional on the
 * delivery being as read); its outbox key moves past its 24 h, the sweep only its backstop. Then:
 * - parked because every lease was taken, it looks at the breaker once more (strongly consistent): a lease given
 *   back between the first look and the park (its wake gone by before the park showed in the index) would leave it
 *   waiting, so if the endpoint can take it now it takes itself out of the index and sends its own message;
 * - on an open breaker, the wake sent when it opened comes at the cool-down's end; a delivery that comes within two
 *   seconds of that end is not parked (the wake's look at the index could miss it): it comes back itself, by a
 *   message delayed until the end.
 * A delivery that has waited on an open breaker past {@link MAX_BREAKER_WAIT_MS} is failed instead. One waiting for
 * a slow endpoint's lease is not: the endpoint answers, and takes its parked deliveries oldest first.
 */
async function parkOnBreaker(deps: WebhookDeliveryDeps, delivery: WebhookDelivery, gate: Extract<Gate, { kind: 'park' }>): Promise<DeliveryStep> {
  const now = deps.now();
  const createdAt = Date.parse(delivery.createdAt);
  if (gate.reason === 'open' && now - createdAt > MAX_BREAKER_WAIT_MS) return failOnOpenBreaker(deps, delivery);
  if (gate.reason === 'open' && gate.until - now <= ENDPOINT_STALENESS_MS + 1_000) {
    await deps.queue.send({ deliveryId: delivery.id, partnerId: delivery.partnerId }, Math.ceil((gate.until - now) / 1000));
    return { outcome: 'deferred', until: gate.until };
  }
  const relayAfter = Math.max(createdAt + MAX_BREAKER_WAIT_MS, now) + Math.round(PARK_BACKSTOP_MS * (1 + deps.random()));
  if (!(await deps.deliveries.parkDelivery(delivery, { now, relayAfter }))) return { outcome: 'not-due' };
  if (gate.reason === 'busy') {
    const breaker = await deps.breakers.getBreaker(delivery.partnerId, delivery.endpointId);
    const free = breaker === undefined || freeCapacityOf(breaker.state, deps.now()) > 0;
    if (free && (await deps.deliveries.unparkDelivery(delivery.id, delivery.endpointId))) {
      await deps.queue.send({ deliveryId: delivery.id, partnerId: delivery.partnerId }, 0);
      return { outcome: 'deferred', until: now };
    }
  }
  return { outcome: 'parked', reason: gate.reason, until: gate.until };
}

/** Fails a delivery that has waited on its endpoint's open breaker past {@link MAX_BREAKER_WAIT_MS}, without an attempt. */
const failOnOpenBreaker = (deps: WebhookDeliveryDeps, delivery: WebhookDelivery) =>
  failWithoutAttempt(deps, delivery, `Not attempted again: the endpoint kept timing out, its circuit breaker open for over ${MAX_BREAKER_WAIT_MS / 3_600_000} h`);

/** A wake message for the delivery's endpoint, handed over at `at` (now, or a cool-down's end). */
const sendWake = (deps: WebhookDeliveryDeps, delivery: Pick<WebhookDelivery, 'partnerId' | 'endpointId'>, at: number) =>
  deps.queue.send({ wakeEndpointId: delivery.endpointId, partnerId: delivery.partnerId }, Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil((at - deps.now()) / 1000))));

/** Parked deliveries one wake message takes out at most; an endpoint that can take more gets another wake message. */
export const WAKE_PAGE = 100;

/** What one wake message did, for the consumer's log line and for tests; `expired`: parked past 24 h on an open breaker, failed. */
export type WakeStep =
  | { outcome: 'woken'; woken: number; more: boolean; expired: number }
  /** The endpoint cannot take a delivery now: `open` (woken again at `until`), or `busy` (its leases' outcomes wake it). */
  | { outcome: 'waiting'; reason: 'open' | 'busy'; until?: number; expired: number };

/**
 * Handles a wake message: takes out of the endpoint's parked index as many deliveries as it can take now (oldest
 * first, each by a conditional write, so two wakes never wake one delivery twice) and sends a message for each. An
 * endpoint that takes any number (closed and fast, or deleted: its deliveries are failed) is woken a page at a
 * time, each page's wake message sending the next. A wake that comes before the cool-down's end is sent again,
 * delayed until then, so an open endpoint always has one on its way. While the breaker is not closed, the wake
 * first fails the deliveries parked on it past {@link MAX_BREAKER_WAIT_MS} (oldest first, a page at a time).
 * A lost wake (a consumer that stopped between a breaker's write and its wake) is made good by the next delivery to
 * the endpoint, or at last by the sweep, which sends a parked delivery again an hour or two past its 24 h.
 */
export async function wakeEndpoint(deps: WebhookDeliveryDeps, message: { partnerId: string; endpointId: string }): Promise<WakeStep> {
  const breaker = await deps.breakers.getBreaker(message.partnerId, message.endpointId);
  // Not closed: the oldest page is read once, to fail what has waited past 24 h and to wake from the rest.
  const oldest = breaker !== undefined && !isClosed(breaker.state) ? await deps.deliveries.parkedDeliveries(message.endpointId, WAKE_PAGE) : undefined;
  const expired = oldest === undefined ? [] : await failExpiredParked(deps, oldest);
  const fullPageExpired = expired.length === WAKE_PAGE;
  const now = deps.now();
  if (breaker !== undefined && now < breaker.state.openUntil) {
    await sendWake(deps, message, fullPageExpired ? now : breaker.state.openUntil);
    return { outcome: 'waiting', reason: 'open', until: breaker.state.openUntil, expired: expired.length };
  }
  const free = breaker === undefined ? Infinity : freeCapacityOf(breaker.state, now);
  if (free <= 0) return { outcome: 'waiting', reason: 'busy', expired: expired.length };
  const limit = Math.min(free, WAKE_PAGE);
  const parked = oldest === undefined ? await deps.deliveries.parkedDeliveries(message.endpointId, limit) : oldest.filter((entry) => !expired.includes(entry)).slice(0, limit);
  const woken = await Promise.all(
    parked.map(async ({ deliveryId }) => {
      if (!(await deps.deliveries.unparkDelivery(deliveryId, message.endpointId))) return false;
      await deps.queue.send({ deliveryId, partnerId: message.partnerId }, 0);
      return true;
    }),
  );
  const count = woken.filter(Boolean).length;
  const more = (free === Infinity && parked.length === limit) || fullPageExpired;
  // A full page of which none could be woken: the index has not caught up with the last wake's writes yet.
  if (more) await sendWake(deps, message, count > 0 || fullPageExpired ? now : now + 1_000);
  return { outcome: 'woken', woken: count, more, expired: expired.length };
}

/** Fails those of `oldest` (the endpoint's longest-parked deliveries) parked past {@link MAX_BREAKER_WAIT_MS}; the ones it looked at. */
async function failExpiredParked(deps: WebhookDeliveryDeps, oldest: Array<{ deliveryId: string; createdAt: string }>) {
  const deadline = deps.now() - MAX_BREAKER_WAIT_MS;
  const expired = oldest.filter(({ createdAt }) => Date.parse(createdAt) < deadline);
  await Promise.all(
    expired.map(async ({ deliveryId }) => {
      const delivery = await deps.deliveries.getDelivery(deliveryId);
      if (delivery?.status === 'pending') await failOnOpenBreaker(deps, delivery);
    }),
  );
  return expired;
}

/**
 * Writes `next` of the endpoint's breaker, conditional on the revision read; on a conflict reads it again and
 * applies `next` to what it finds. `undefined` from `next`: nothing to write. Never throws: what it records (an
 * attempt's outcome, a lease given back) only costs an attempt or a wait when it is lost.
 */
async function updateBreaker(
  deps: WebhookDeliveryDeps,
  delivery: Pick<WebhookDelivery, 'partnerId' | 'endpointId'>,
  read: StoredBreaker,
  next: (state: BreakerState) => BreakerState | undefined,
): Promise<{ before: BreakerState; after: BreakerState } | 'unchanged' | 'gone' | 'not-recorded'> {
  try {
    let breaker: StoredBreaker | undefined = read;
    for (let tries = 0; breaker !== undefined && tries < BREAKER_WRITE_TRIES; tries += 1) {
      const after = next(breaker.state);
      if (after === undefined) return 'unchanged';
      if (await deps.breakers.putBreaker(delivery.partnerId, delivery.endpointId, after, breaker.revision)) return { before: breaker.state, after };
      breaker = await deps.breakers.getBreaker(delivery.partnerId, delivery.endpointId);
    }
    return breaker === undefined ? 'gone' : 'not-recorded';
  } catch {
    return 'not-recorded';
  }
}

/**
 * Step 7's breaker part: its state after this attempt, and the wake its new state calls for: at the cool-down's end
 * when it opened, at once when it can take more than before (a lease given back, closed, fast again).
 */
async function recordOnBreaker(deps: WebhookDeliveryDeps, delivery: WebhookDelivery, read: StoredBreaker, outcome: AttemptOutcome): Promise<BreakerChange> {
  const now = deps.now();
  const written = await updateBreaker(deps, delivery, read, (state) => afterAttempt(state, outcome, now, deps.breakerSettings));
  // Deleted meanwhile: a wake fails what is parked on it.
  if (written === 'gone') await sendWake(deps, delivery, now).catch(() => undefined);
  if (typeof written === 'string') return written === 'gone' ? 'unchanged' : written;
  const { before, after } = written;
  if (after.openUntil > now) {
    await sendWake(deps, delivery, after.openUntil).catch(() => undefined);
    return 'opened';
  }
  if (freeCapacityOf(after, now) > 0) await sendWake(deps, delivery, now).catch(() => undefined);
  if (!isClosed(before) && isClosed(after)) {
    // Another consumer's cached view may still say "not closed" for a moment, and park a delivery after this wake.
    await sendWake(deps, delivery, now + ENDPOINT_STALENESS_MS + 1_000).catch(() => undefined);
    return 'closed';
  }
  if (!isClosed(before)) return 'recovering';
  return before.slow === after.slow ? 'unchanged' : after.slow ? 'slow' : 'fast';
}

/** Fails a pending delivery that no attempt is running on, without an attempt (step 2 above). */
async function failWithoutAttempt(deps: WebhookDeliveryDeps, delivery: WebhookDelivery, error: string): Promise<DeliveryStep> {
  const now = deps.now();
  const httpStatus = delivery.lastHttpStatus;
  const audit = auditOf(delivery, 'webhook_delivery.failed', now, { attempt: delivery.attempts, http_status: httpStatus, error });
  const recorded = await deps.deliveries.recordAttempt(delivery, { status: 'failed', httpStatus, error }, audit, { now, withoutLease: true });
  return recorded ? { outcome: 'failed', attempt: delivery.attempts, httpStatus, error } : { outcome: 'not-due' };
}

/** What the admin's delivery routes need: the deliveries, the partners and the endpoints' breakers (`lib/composition/`). */
export interface DeliveryAdminDeps {
  deliveries: Pick<DeliveryStore, 'getDelivery'> & {
    listDeliveries(partnerId: string, page: { status?: DeliveryStatus | undefined; limit: number; cursor?: string | undefined }): Promise<Page<WebhookDelivery>>;
    /** Writes the resent delivery with its audit event, if its endpoint still exists (else 409 WEBHOOK_ENDPOINT_DELETED). */
    putResentDelivery(delivery: WebhookDelivery, audit: AuditEvent): Promise<void>;
  };
  partners: PartnerReader;
  breakers: BreakerStore;
}

/** A partner's deliveries, newest first (404 PARTNER_NOT_FOUND for an unknown partner). */
export async function listPartnerDeliveries(
  deps: Pick<DeliveryAdminDeps, 'deliveries' | 'partners'>,
  partnerId: string,
  page: { status?: DeliveryStatus | undefined; limit: number; cursor?: string | undefined },
): Promise<Page<WebhookDelivery>> {
  if ((await deps.partners.getPartner(partnerId)) === undefined) throw errors.partnerNotFound();
  return deps.deliveries.listDeliveries(partnerId, page);
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
export async function resendDelivery(deps: Pick<DeliveryAdminDeps, 'deliveries' | 'breakers'>, deliveryId: string): Promise<WebhookDelivery> {
  const original = await deps.deliveries.getDelivery(deliveryId);
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
    parked: undefined,
    createdAt: now,
    updatedAt: now,
  };
  const audit = auditOf(resent, 'webhook_delivery.resent', Date.parse(now), { resent_from: original.id });
  // The cool-down ends before the resent delivery exists, so the relay cannot hand it over to an open breaker.
  const breaker = await deps.breakers.getBreaker(resent.partnerId, resent.endpointId);
  if (breaker !== undefined && breaker.state.openUntil > Date.parse(now)) {
    await deps.breakers.putBreaker(resent.partnerId, resent.endpointId, { ...breaker.state, openUntil: Date.parse(now) }, breaker.revision);
  }
  await deps.deliveries.putResentDelivery(resent, audit);
  return resent;
}
