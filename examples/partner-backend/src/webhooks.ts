/**
 * Receiving the service's payment webhooks (docs/webhooks.md): verify, store, answer; reconcile afterwards.
 *
 * - Verify the Standard Webhooks signature (`webhook-id`, `webhook-timestamp`, `webhook-signature`) over the raw
 *   body as received, before parsing it, with the `standardwebhooks` package; it also refuses a timestamp more
 *   than 5 minutes off (either way), so a captured request cannot be replayed later. (Why not `X-Svc-Signature`:
 *   README.md, "Which signature".)
 * - Store the verified event, idempotently: delivery is at least once and unordered, so an event id already
 *   processed is acknowledged and nothing more, and a status is applied to the attempt of its `svc_tx_id` only if
 *   it is later than the one known. Then the event id is recorded.
 * - That is all {@link PaymentWebhooks.receive} does before the answer: local writes only, so the 2xx goes back
 *   well within the service's 10 s. The webhook is a prompt, not the truth: the server reconciles the attempt
 *   with the service (reconciliation.ts) after answering.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { AttemptStore, CheckoutAttempt } from './attempts';
import type { TransactionStatus } from './service-client';

/** The body of every partner webhook (docs/webhooks.md, "The request"). */
export interface PaymentWebhook {
  event:
    | 'transaction_succeeded'
    | 'transaction_failed'
    | 'transaction_abandoned'
    | 'transaction_refunded'
    | 'transaction_chargeback'
    | 'transaction_partially_refunded'
    | 'transaction_dispute_closed';
  svc_tx_id: string;
  partner_id: string;
  client_id: string;
  partner_reference: string;
  status: TransactionStatus;
  /** Major units. */
  amount: number;
  currency: string;
  meta: Record<string, unknown>;
  /** `transaction_partially_refunded` only: the cumulative amount refunded (major units). */
  refunded_amount?: number;
  /** `transaction_dispute_closed` only. */
  dispute_status?: 'won' | 'lost';
}

/** The event ids already processed (a table with a unique key, in a partner's database). */
export interface ProcessedEvents {
  has(eventId: string): Promise<boolean>;
  add(eventId: string): Promise<void>;
}

export class InMemoryProcessedEvents implements ProcessedEvents {
  private readonly ids = new Set<string>();

  async has(eventId: string): Promise<boolean> {
    return this.ids.has(eventId);
  }

  async add(eventId: string): Promise<void> {
    this.ids.add(eventId);
  }
}

/** Statuses a webhook can carry (the events' statuses); anything else is not a payment event this backend knows. */
const EVENT_STATUSES: readonly string[] = ['succeeded', 'failed', 'abandoned', 'refunded', 'chargeback'];

/** Signed, yet not a payment event's shape (a body this backend version does not understand): answer 400. */
const isPaymentWebhook = (body: unknown): body is PaymentWebhook =>
  typeof body === 'object' &&
  body !== null &&
  typeof (body as PaymentWebhook).svc_tx_id === 'string' &&
  EVENT_STATUSES.includes((body as PaymentWebhook).status);

export type WebhookOutcome =
  /**
   * Not signed by the service with this endpoint's secret, its timestamp more than 300 s off, or (signed) not a
   * payment event: answer 400.
   */
  | { outcome: 'refused' }
  /** An event id processed before: answer 2xx, do nothing. */
  | { outcome: 'duplicate' }
  /** A payment this backend has no attempt for: answer 2xx (a retry would not change that). */
  | { outcome: 'unknown_transaction' }
  /** Stored: answer 2xx, then reconcile `attempt` with the service. */
  | { outcome: 'processed'; attempt: CheckoutAttempt };

export interface PaymentWebhooksDeps {
  /** The endpoint's `whsec_…` secret, shown once when the endpoint was created. */
  secret: string;
  attempts: AttemptStore;
  processedEvents: ProcessedEvents;
}

/** Node gives a header as a string, an array (repeated) or nothing; the verifier takes strings. */
const headerValue = (headers: IncomingHttpHeaders, name: string) => {
  const value = headers[name];
  return typeof value === 'string' ? value : '';
};

export class PaymentWebhooks {
  private readonly webhook: Webhook;

  constructor(private readonly deps: PaymentWebhooksDeps) {
    this.webhook = new Webhook(deps.secret);
  }

  /** The event and its id, if the request is the service's, signed with this endpoint's secret, and recent; else throws `WebhookVerificationError`. */
  verify(rawBody: string, headers: IncomingHttpHeaders): { eventId: string; event: PaymentWebhook } {
    const signed = {
      'webhook-id': headerValue(headers, 'webhook-id'),
      'webhook-timestamp': headerValue(headers, 'webhook-timestamp'),
      'webhook-signature': headerValue(headers, 'webhook-signature'),
    };
    const event = this.webhook.verify(rawBody, signed) as PaymentWebhook;
    return { eventId: signed['webhook-id'], event };
  }

  /**
   * Verifies and stores one delivery, without calling the service: the caller answers at once, then reconciles a
   * `processed` attempt. Throws only when the stores fail (answer 5xx: the service delivers again, and the event
   * id, recorded last, is not yet marked processed).
   */
  async receive(rawBody: string, headers: IncomingHttpHeaders): Promise<WebhookOutcome> {
    let verified: { eventId: string; event: PaymentWebhook };
    try {
      verified = this.verify(rawBody, headers);
    } catch (error) {
      if (error instanceof WebhookVerificationError) return { outcome: 'refused' };
      throw error;
    }
    if (!isPaymentWebhook(verified.event)) return { outcome: 'refused' };
    if (await this.deps.processedEvents.has(verified.eventId)) return { outcome: 'duplicate' };
    const attempt = await this.deps.attempts.findBySvcTxId(verified.event.svc_tx_id);
    if (attempt === undefined) return { outcome: 'unknown_transaction' };
    const stored = await this.deps.attempts.advanceStatus(attempt.partner_reference, verified.event.status);
    await this.deps.processedEvents.add(verified.eventId);
    return { outcome: 'processed', attempt: stored };
  }
}
