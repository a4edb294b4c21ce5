/**
 * Outbound partner webhooks (interface-spec.md Events; decisions.md §2, §8): the events a partner can subscribe
 * to, its endpoints, and one delivery per (event, endpoint). Pure: no I/O.
 *
 * One transaction move emits one partner event (`evt_…`, stable across retries and resends); each endpoint
 * subscribed to it gets its own delivery (`dlv_…`), attempted up to {@link MAX_DELIVERY_ATTEMPTS} times. The
 * body is fixed when the event is emitted and sent byte for byte on every attempt and resend.
 */
import type { BreakerState } from './endpoint-breaker';
import { toMajorUnits } from './money';
import type { DisputeStatus } from './reversal-facts';
import type { Transaction, TransactionStatus } from './transaction';

/** A partner event a write emits: its name, the status it announces, and what it adds to the spec's body. */
export interface PartnerNotice {
  event: PartnerEvent;
  status: TransactionStatus;
  refundedMinor?: number;
  disputeStatus?: DisputeStatus;
}

export const PARTNER_EVENTS = [
  'transaction_succeeded',
  'transaction_failed',
  'transaction_abandoned',
  'transaction_refunded',
  'transaction_chargeback',
  // Opt-in events of the ledger (decisions.md §5a): a refund that leaves the payment succeeded, a dispute's outcome.
  'transaction_partially_refunded',
  'transaction_dispute_closed',
] as const;

export type PartnerEvent = (typeof PARTNER_EVENTS)[number];

/** The statuses a processor event can move a transaction to, each announced by its partner event. */
export type EventStatus = 'succeeded' | 'failed' | 'abandoned' | 'refunded' | 'chargeback';

export const partnerEventFor = (status: EventStatus): PartnerEvent => `transaction_${status}`;

/** A partner URL subscribed to some events. Its signing secret is stored sealed and is not part of this type. */
export interface WebhookEndpoint {
  id: string;
  partnerId: string;
  name: string;
  url: string;
  events: PartnerEvent[];
  createdAt: string;
  /** Its circuit breaker, as stored (absent on a new endpoint not yet written). */
  breaker?: BreakerState | undefined;
}

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** Attempts per delivery (spec Limits: webhook delivery attempts 3). */
export const MAX_DELIVERY_ATTEMPTS = 3;

/**
 * How long a claimed attempt holds its delivery: no other attempt can be claimed before it runs out. Longer
 * than an attempt can take (the 10 s request timeout and two DynamoDB writes), and than the consumer's
 * function timeout, so a lease only runs out under a consumer that has stopped. The outbox's first relay time
 * lies past it (`lib/store/deliveries.ts`).
 */
export const ATTEMPT_LEASE_MS = 60_000;

/**
 * The wait before the next attempt after attempt `n` failed, in multiples of `WEBHOOK_RETRY_BASE_MS`
 * (decisions.md §8): ×1 after the first failure, ×4 after the second.
 */
const RETRY_FACTORS: readonly number[] = [1, 4];

/** Each wait is drawn within ±20 % of its nominal value, so endpoints that failed together do not retry together. */
const RETRY_JITTER = 0.2;

/**
 * Milliseconds to wait after attempt `failedAttempt` (1-based) failed: base × factor, jittered by `random`
 * (0 ≤ random < 1) within ±{@link RETRY_JITTER}, at least 1. Exact: a queue's delay is whole seconds, so the
 * consumer waits out the part of a second the queue cannot (see `deliverWebhook`).
 */
export function retryDelayMs(failedAttempt: number, baseMs: number, random: number): number {
  const factor = RETRY_FACTORS[Math.min(failedAttempt, RETRY_FACTORS.length) - 1] ?? 1;
  return Math.max(1, Math.round(baseMs * factor * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random)));
}

/** A partner's answer counts as delivered only when it is a 2xx (a 3xx is not followed and is a failure). */
export const isDelivered = (httpStatus: number) => httpStatus >= 200 && httpStatus <= 299;

export interface WebhookDelivery {
  id: string;
  /** The partner event's id (`X-Svc-Event-Id`, `webhook-id`): the same on every attempt and resend. */
  eventId: string;
  endpointId: string;
  partnerId: string;
  event: PartnerEvent;
  svcTxId: string;
  /** The exact JSON body sent (and signed) on every attempt. */
  payload: string;
  status: DeliveryStatus;
  attempts: number;
  lastHttpStatus: number | null;
  lastError: string | null;
  /** Epoch ms before which the next attempt is not due (the backoff), while a retry waits; else absent. */
  nextAttemptAt?: number | undefined;
  /** Epoch ms: an attempt is running until then (its lease), as read; else absent. */
  leaseUntil?: number | undefined;
  /** Epoch ms: while pending, when the outbox sweep would send it again (its outbox sort key), as read. */
  relayAfter?: number | undefined;
  /** While pending: it waits, parked, for its endpoint to take it (woken by the consumer), as read. */
  parked?: boolean | undefined;
  createdAt: string;
  updatedAt: string;
}

/** What became of a claimed attempt (or of a delivery that cannot be attempted at all). */
export type AttemptRecord =
  | { status: 'succeeded'; httpStatus: number }
  | { status: 'failed'; httpStatus: number | null; error: string }
  | { status: 'pending'; httpStatus: number | null; error: string; nextAttemptAt: number };

/**
 * The body of a partner webhook, exactly the spec's shape (Events: Outbound partner webhooks), money in major
 * units, `meta` unchanged from creation (an empty object when none was given). The ledger's two events add one
 * field each: `refunded_amount` (cumulative) and `dispute_status`.
 */
export function partnerEventBody(transaction: Transaction, notice: PartnerNotice): string {
  return JSON.stringify({
    event: notice.event,
    svc_tx_id: transaction.svcTxId,
    partner_id: transaction.partnerId,
    client_id: transaction.clientId,
    partner_reference: transaction.partnerReference,
    status: notice.status,
    amount: toMajorUnits(transaction.amountMinor, transaction.currency),
    currency: transaction.currency,
    meta: transaction.meta ?? {},
    ...(notice.refundedMinor === undefined ? {} : { refunded_amount: toMajorUnits(notice.refundedMinor, transaction.currency) }),
    ...(notice.disputeStatus === undefined ? {} : { dispute_status: notice.disputeStatus }),
  });
}

/** The deliveries of one partner event: one per endpoint subscribed to it, each new and pending. */
export function deliveriesFor(
  endpoints: readonly WebhookEndpoint[],
  emitted: { eventId: string; event: PartnerEvent; transaction: Transaction; payload: string; now: string },
  newDeliveryId: () => string,
): WebhookDelivery[] {
  return endpoints
    .filter((endpoint) => endpoint.events.includes(emitted.event))
    .map((endpoint) => ({
      id: newDeliveryId(),
      eventId: emitted.eventId,
      endpointId: endpoint.id,
      partnerId: emitted.transaction.partnerId,
      event: emitted.event,
      svcTxId: emitted.transaction.svcTxId,
      payload: emitted.payload,
      status: 'pending' as const,
      attempts: 0,
      lastHttpStatus: null,
      lastError: null,
      createdAt: emitted.now,
      updatedAt: emitted.now,
    }));
}
