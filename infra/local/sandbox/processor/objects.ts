/**
 * The objects the processor sandbox keeps, in Stripe's shapes (the fields the sandbox maintains), and the
 * store that holds them: what a restart on a state directory saves and loads.
 */

/** The statuses a sandbox PaymentIntent can be in (a subset of Stripe's). */
export type SandboxPaymentIntentStatus = 'requires_payment_method' | 'succeeded' | 'canceled';
export type SandboxCancellationReason = 'abandoned' | 'duplicate' | 'fraudulent' | 'requested_by_customer';
export type SandboxRefundReason = 'duplicate' | 'fraudulent' | 'requested_by_customer';
/** A dispute awaits the merchant's response until the card network decides it (`/sandbox/disputes/:id/close`). */
export type SandboxDisputeStatus = 'needs_response' | 'won' | 'lost';

/** Stripe's PaymentIntent object, with the fields the sandbox maintains. */
export interface SandboxPaymentIntent {
  id: string;
  object: 'payment_intent';
  amount: number;
  amount_capturable: number;
  amount_received: number;
  automatic_payment_methods: { enabled: boolean; allow_redirects?: 'always' | 'never' } | null;
  canceled_at: number | null;
  cancellation_reason: SandboxCancellationReason | null;
  capture_method: 'automatic' | 'automatic_async';
  client_secret: string;
  confirmation_method: 'automatic';
  created: number;
  currency: string;
  customer: null;
  description: string | null;
  last_payment_error: SandboxPaymentError | null;
  latest_charge: string | null;
  livemode: false;
  metadata: Record<string, string>;
  next_action: null;
  payment_method: string | null;
  payment_method_types: string[];
  receipt_email: string | null;
  statement_descriptor: null;
  statement_descriptor_suffix: string | null;
  status: SandboxPaymentIntentStatus;
}

/** Stripe's `last_payment_error` of a declined confirmation (also the body of its 402 error). */
export interface SandboxPaymentError {
  type: 'card_error';
  code: 'card_declined';
  decline_code: string;
  message: string;
  charge: string;
  doc_url: string;
  payment_method: SandboxPaymentMethod;
}

export interface SandboxPaymentMethod {
  id: string;
  object: 'payment_method';
  type: 'card';
  card: SandboxCard;
  created: number;
  customer: null;
  livemode: false;
  metadata: Record<string, string>;
}

export interface SandboxCard {
  brand: string;
  last4: string;
  exp_month: number;
  exp_year: number;
  funding: 'credit';
  country: 'US';
}

/**
 * A charge as the store keeps it: its refunds are kept once, as refund objects, and listed on the charge only
 * when it is shown (`SandboxObjects.chargeObject`), so the list can never disagree with them.
 */
export interface SandboxCharge {
  id: string;
  object: 'charge';
  amount: number;
  amount_captured: number;
  amount_refunded: number;
  captured: boolean;
  created: number;
  currency: string;
  description: string | null;
  disputed: boolean;
  failure_code: string | null;
  failure_message: string | null;
  livemode: false;
  metadata: Record<string, string>;
  outcome: { network_status: string; reason: string | null; risk_level: 'normal'; seller_message: string; type: string };
  paid: boolean;
  payment_intent: string;
  payment_method: string;
  payment_method_details: { type: 'card'; card: SandboxCard };
  receipt_email: string | null;
  refunded: boolean;
  statement_descriptor_suffix: string | null;
  status: 'succeeded' | 'failed';
}

/** Stripe's charge as the API and its events show it: with its refunds, newest first. */
export interface SandboxChargeObject extends SandboxCharge {
  refunds: SandboxList<SandboxRefund>;
}

/** Stripe's list object: a list embedded in another object is whole here (`has_more: false`). */
export interface SandboxList<T> {
  object: 'list';
  data: T[];
  has_more: false;
  total_count: number;
  url: string;
}

export interface SandboxRefund {
  id: string;
  object: 'refund';
  amount: number;
  balance_transaction: null;
  charge: string;
  created: number;
  currency: string;
  metadata: Record<string, string>;
  payment_intent: string;
  reason: SandboxRefundReason | null;
  status: 'succeeded';
}

/** Stripe's balance transaction: money a dispute moves out of (or back into) the merchant's balance. */
export interface SandboxBalanceTransaction {
  id: string;
  object: 'balance_transaction';
  /** Negative when taken from the balance, positive when given back. */
  amount: number;
  available_on: number;
  balance_type: 'payments';
  created: number;
  currency: string;
  description: string;
  exchange_rate: null;
  fee: number;
  fee_details: SandboxFeeDetail[];
  /** `amount - fee`: what the balance moves by. */
  net: number;
  reporting_category: 'dispute' | 'dispute_reversal';
  /** The dispute that moved the money. */
  source: string;
  status: 'available';
  type: 'adjustment';
}

export interface SandboxFeeDetail {
  amount: number;
  application: null;
  currency: string;
  description: string;
  type: 'stripe_fee';
}

export interface SandboxDispute {
  id: string;
  object: 'dispute';
  amount: number;
  /** The withdrawal of the disputed amount and the fee; a won dispute's reinstatement after it. */
  balance_transactions: SandboxBalanceTransaction[];
  charge: string;
  created: number;
  currency: string;
  evidence_details: { due_by: number; has_evidence: false; past_due: false; submission_count: 0 };
  is_charge_refundable: false;
  livemode: false;
  metadata: Record<string, string>;
  payment_intent: string;
  reason: 'fraudulent';
  status: SandboxDisputeStatus;
}

/** The store's content as plain data, oldest object first: what the state file keeps. */
export interface SavedObjects {
  intents: SandboxPaymentIntent[];
  charges: SandboxCharge[];
  refunds: SandboxRefund[];
  disputes: SandboxDispute[];
}

/**
 * Every object by id. The handlers change the objects in place, synchronously, so one request's changes
 * are never interleaved with another's.
 */
export class SandboxObjects {
  readonly intents: Map<string, SandboxPaymentIntent>;
  readonly charges: Map<string, SandboxCharge>;
  readonly refunds: Map<string, SandboxRefund>;
  readonly disputes: Map<string, SandboxDispute>;

  constructor(saved: SavedObjects = { intents: [], charges: [], refunds: [], disputes: [] }) {
    this.intents = byId(saved.intents);
    this.charges = byId(saved.charges);
    this.refunds = byId(saved.refunds);
    this.disputes = byId(saved.disputes);
  }

  /** Every PaymentIntent, oldest first (copies). */
  listIntents(): SandboxPaymentIntent[] {
    return [...this.intents.values()].map((intent) => structuredClone(intent));
  }

  /**
   * The charge as Stripe shows it (a copy): with every refund of it, newest first, as Stripe lists them (the
   * store holds them in the order they were made, also after a restart).
   */
  chargeObject(charge: SandboxCharge): SandboxChargeObject {
    const refunds = [...this.refunds.values()].filter((refund) => refund.charge === charge.id).reverse();
    return structuredClone({
      ...charge,
      refunds: { object: 'list', data: refunds, has_more: false, total_count: refunds.length, url: `/v1/charges/${charge.id}/refunds` },
    });
  }

  /** The live objects, for the state file to serialise at once (before any other request changes them). */
  save(): SavedObjects {
    return {
      intents: [...this.intents.values()],
      charges: [...this.charges.values()],
      refunds: [...this.refunds.values()],
      disputes: [...this.disputes.values()],
    };
  }
}

function byId<T extends { id: string }>(objects: readonly T[]): Map<string, T> {
  return new Map(objects.map((object) => [object.id, object]));
}

/** Stripe's timestamps: unix seconds. */
export function now(): number {
  return Math.floor(Date.now() / 1000);
}
