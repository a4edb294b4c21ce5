/** What the service needs from a card processor. Use cases depend on this, never on the Stripe SDK. */
import type { CurrencyCode } from '../domain/money';

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
}

export interface Processor {
  /**
   * Creates the intent idempotently: the same `svcTxId` always yields the same intent, so a retry after a
   * crash between "intent created" and "transaction written" finds the intent instead of making a second one.
   */
  createPaymentIntent(intent: NewPaymentIntent): Promise<PaymentIntent>;
  /** `undefined` when the processor does not know the id. */
  retrievePaymentIntent(id: string): Promise<PaymentIntent | undefined>;
  /** For the partner's frontend; 500 PROCESSOR_PUBLISHABLE_MISSING when not configured. */
  publishableKey(): Promise<string>;
}

/** Stripe's PaymentIntent ids: `pi_` and alphanumerics. Anything else is not looked up at all. */
export const PAYMENT_INTENT_ID = /^pi_[A-Za-z0-9]{8,64}$/;
