/** What the service needs from a card processor. Use cases depend on this, never on the Stripe SDK. */
import type { CurrencyCode } from '../../domain/money';
import type { PaymentChange } from '../../domain/ledger';

export interface NewPaymentIntent {
  svcTxId: string;
  amountMinor: number;
  currency: CurrencyCode;
  receiptEmail: string;
  statementDescriptorSuffix: string | undefined;
  metadata: Record<string, string>;
}

export interface PaymentIntent {
  id: string;
  status: string;
  amountMinor: number;
  /** `undefined` for a currency the service does not take: such an intent matches no transaction. */
  currency: CurrencyCode | undefined;
  clientSecret: string;
  /**
   * The intent's metadata as the processor holds it. The service's own intents carry `svc_tx_id` and
   * `partner_id`, which tie them to one transaction (attach-intent refuses an intent tied to another).
   */
  metadata: Record<string, string>;
  /**
   * What the intent's state says of the payment's outcome, as the event that reports it: succeeded, its last
   * attempt failed, or canceled; `undefined` while the payment is still open. Its id is derived from the intent and
   * the outcome, so every look at one outcome is one event, applied once (decisions.md §12).
   */
  outcomeEvent: PaymentEvent | undefined;
}

/**
 * The payment an event is about, as the event states it, converted at the edge to an upper-case ISO code and
 * ISO minor units. `amountMinor` is `undefined` when the event's amount is not the payment's (a dispute may be
 * for part of it). `readable: false` when the event states a currency the service does not take, or an amount
 * that is no whole number of its minor units: such an event matches no transaction.
 */
export type EventMoney =
  | { readable: true; currency: CurrencyCode; amountMinor: number | undefined }
  | { readable: false; reason: string };

/** A verified processor event, in the service's terms (no processor types cross the port). */
export type ProcessorEvent =
  /** A type the service does not act on: acknowledged and ignored. */
  | { kind: 'ignored'; id: string; type: string }
  | {
      kind: 'transaction';
      /** The processor's event id: each is applied once. */
      id: string;
      type: string;
      /** What the event says of the payment; `null` when its money cannot be read (`money` says why). */
      change: PaymentChange | null;
      /** The payment intent the event is about; `undefined` when the event names none. */
      paymentIntentId: string | undefined;
      /** `undefined` when the event states no amount or currency. */
      money: EventMoney | undefined;
    };

/** A processor event about a payment (not an ignored type). */
export type PaymentEvent = Extract<ProcessorEvent, { kind: 'transaction' }>;

/**
 * The values of a payment the service hands the processor, in the port's terms: {@link NewPaymentIntent}'s fields,
 * the metadata keys the partner fills (`metadata.<key>`), and the id of an intent the partner names.
 */
export type PaymentParameter =
  | 'amount'
  | 'currency'
  | 'receiptEmail'
  | 'statementDescriptorSuffix'
  | 'metadata.partner_reference'
  | 'metadata.partner_id'
  | 'metadata.client_id'
  | 'paymentIntentId';

/**
 * The processor will not take a value the partner chose (an amount below its minimum, an e-mail it rejects, a
 * descriptor it cannot print): the caller's to fix, not a fault of the service. `parameter` names the value, or is
 * `undefined` when the processor refuses a value of the payment without saying which. `refusedBy`: `processor`
 * when the processor answered so (`message` is its own words), `adapter` when the adapter refused before asking,
 * the value having no form the processor takes (`message` says why). A refusal of anything the service filled in
 * itself is no such error: it stays the service's own failure.
 */
export class ProcessorRefusedParameter extends Error {
  override readonly name = 'ProcessorRefusedParameter';
  readonly parameter: PaymentParameter | undefined;
  readonly refusedBy: 'processor' | 'adapter';

  constructor(parameter: PaymentParameter | undefined, message: string, refusedBy: 'processor' | 'adapter') {
    super(message);
    this.parameter = parameter;
    this.refusedBy = refusedBy;
  }
}

export interface Processor {
  /**
   * Creates the intent idempotently: the same `svcTxId` always yields the same intent, so a retry after a
   * crash between "intent created" and "transaction written" finds the intent instead of making a second one.
   * {@link ProcessorRefusedParameter} when the processor will not take a value the partner chose (so may every call
   * that sends one).
   */
  createPaymentIntent(intent: NewPaymentIntent): Promise<PaymentIntent>;
  /** `undefined` when the processor does not know the id; with the outcome its state reports, if any (`outcomeEvent`). */
  retrievePaymentIntent(id: string): Promise<PaymentIntent | undefined>;
  /**
   * Cancels the intent, so no buyer can pay it any more, and answers it as it then is: `canceled`, or, when the
   * processor refuses because the intent has moved on (succeeded, processing, already canceled), as it is, with its
   * outcome. Idempotent. `undefined` when the processor does not know the id.
   */
  cancelPaymentIntent(id: string): Promise<PaymentIntent | undefined>;
  /** For the partner's frontend; 500 PROCESSOR_PUBLISHABLE_MISSING when not configured. */
  publishableKey(): Promise<string>;
  /**
   * Verifies an event's signature over the exact raw body with the configured webhook secret, then reads it.
   * 400 PROCESSOR_SIGNATURE_MISSING (no header), PROCESSOR_SIGNATURE_INVALID (wrong or expired signature),
   * INVALID_WEBHOOK_JSON (signed, but not a JSON event); 500 PROCESSOR_WEBHOOK_SECRET_MISSING when the
   * service has no webhook secret configured (the processor retries; nothing is lost).
   */
  verifyEvent(rawBody: string, signatureHeader: string | undefined): Promise<ProcessorEvent>;
}

/** Stripe's PaymentIntent ids: `pi_` and alphanumerics. Anything else is not looked up at all. */
export const PAYMENT_INTENT_ID = /^pi_[A-Za-z0-9]{8,64}$/;
