/**
 * A verified processor event's object read into the service's terms ({@link ProcessorEvent}): which payment it is
 * about, and what it says of it (decisions.md §5, §5a). Pure. Kept apart from the Stripe SDK (`events.ts` verifies
 * with it): these are plain JSON objects of Stripe's shapes, read field by field, so no Stripe type reaches a use case.
 */
import type { DisputeStatus, PaymentChange } from '../domain/ledger';
import { type CurrencyCode, normalizeCurrency } from '../domain/money';
import type { EventMoney, PaymentEvent, ProcessorEvent } from '../use-cases/ports/processor';
import { fromStripeAmount } from './stripe-amounts';

/** decisions.md §5: the payment intent events the service acts on, and the outcome each reports. */
const OUTCOME_OF_EVENT_TYPE: Readonly<Record<string, 'succeeded' | 'failed' | 'abandoned'>> = Object.freeze({
  'payment_intent.succeeded': 'succeeded',
  'payment_intent.payment_failed': 'failed',
  'payment_intent.canceled': 'abandoned',
});

/** decisions.md §5a: the charge events whose money the ledger records. */
const REFUND_EVENT = 'charge.refunded';
const DISPUTE_EVENTS: ReadonlySet<string> = new Set(['charge.dispute.created', 'charge.dispute.closed']);

type JsonObject = Record<string, unknown>;

export const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);
export const nonEmptyString = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/**
 * A verified event in the service's terms (decisions.md §5, §5a). The payment intent is the object itself on
 * `payment_intent.*`, and the object's `payment_intent` on a charge or a dispute. A refund event reports the
 * charge's cumulative `amount_refunded` (and its refunds, when the charge lists them all); a dispute event the
 * dispute's amount, fee and outcome. Every amount is converted to the currency's minor units here, at the edge.
 */
export function toProcessorEvent(id: string, type: string, object: unknown): ProcessorEvent {
  const data = isObject(object) ? object : {};
  // Own keys only: `constructor` or `__proto__` must not find Object's.
  if (Object.hasOwn(OUTCOME_OF_EVENT_TYPE, type)) {
    const money = moneyOf(data, { amountIsThePayment: true });
    return { kind: 'transaction', id, type, paymentIntentId: nonEmptyString(data.id), money, change: { kind: 'outcome', status: OUTCOME_OF_EVENT_TYPE[type]! } };
  }
  if (type !== REFUND_EVENT && !DISPUTE_EVENTS.has(type)) return { kind: 'ignored', id, type };
  // An inquiry (`warning_*`) is a question from the card network, not a chargeback: no money leaves the account. If
  // it escalates, the processor opens a new dispute, whose own events move the money.
  if (DISPUTE_EVENTS.has(type) && typeof data.status === 'string' && data.status.startsWith('warning_')) return { kind: 'ignored', id, type };
  const paymentIntentId = intentIdOf(data.payment_intent);
  // A dispute's amount is what the cardholder disputes, which may be part of the payment: its currency only.
  const money = moneyOf(data, { amountIsThePayment: type === REFUND_EVENT });
  if (money === undefined || !money.readable) return { kind: 'transaction', id, type, paymentIntentId, money, change: null };
  const change = type === REFUND_EVENT ? refundsOf(data, money.currency, money.amountMinor) : disputeOf(data, money.currency);
  return typeof change === 'string'
    ? { kind: 'transaction', id, type, paymentIntentId, money: { readable: false, reason: change }, change: null }
    : { kind: 'transaction', id, type, paymentIntentId, money, change };
}

/**
 * The event a payment intent's current state reports (decisions.md §12), read by the same mapping as the processor's
 * own event ({@link toProcessorEvent}), so an outcome the service learns by asking is applied exactly as one it is
 * told: `payment_intent.succeeded` for a succeeded intent, `payment_intent.canceled` for a canceled one, and
 * `payment_intent.payment_failed` for one whose last attempt failed and that waits for another payment method (the
 * state Stripe leaves after a decline). Any other state (processing, requiring an action or a first payment method)
 * is still open: `undefined`. The id names the intent and the outcome, so every look at one outcome is one event.
 */
export function intentOutcomeEvent(intent: unknown): PaymentEvent | undefined {
  const data = isObject(intent) ? intent : {};
  const id = nonEmptyString(data.id);
  if (id === undefined) return undefined;
  const type = OUTCOME_EVENT_OF_INTENT_STATUS[typeof data.status === 'string' ? data.status : ''];
  const failed = data.status === 'requires_payment_method' && isObject(data.last_payment_error);
  const eventType = type ?? (failed ? 'payment_intent.payment_failed' : undefined);
  if (eventType === undefined) return undefined;
  const event = toProcessorEvent(`${INTENT_STATE_EVENT_PREFIX}${id}_${OUTCOME_OF_EVENT_TYPE[eventType]}`, eventType, data);
  return event.kind === 'transaction' ? event : undefined;
}

/** Ids of the events read from an intent's state, never a processor event's own (`evt_…`). */
export const INTENT_STATE_EVENT_PREFIX = 'intent_state_';

const OUTCOME_EVENT_OF_INTENT_STATUS: Readonly<Record<string, string>> = Object.freeze({
  succeeded: 'payment_intent.succeeded',
  canceled: 'payment_intent.canceled',
});

/** A whole number of Stripe's units of `currency`, in the currency's minor units; else why not. */
function minorOf(value: unknown, currency: CurrencyCode, what: string): number | string {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) return `${what} ${JSON.stringify(value)} is not a whole number`;
  const amount = fromStripeAmount(value, currency);
  return amount.ok ? amount.minor : amount.reason;
}

/**
 * The charge's refunds: `amount_refunded` (an older event without it, marked `refunded`, refunded the whole
 * `amount`), and the refunds oldest first when the charge lists all of them (Stripe lists newest first).
 */
function refundsOf(charge: JsonObject, currency: CurrencyCode, amountMinor: number | undefined): PaymentChange | string {
  const stated = charge.amount_refunded ?? (charge.refunded === true ? charge.amount : undefined);
  const refundedMinor = minorOf(stated, currency, 'amount_refunded');
  if (typeof refundedMinor === 'string') return refundedMinor;
  if (amountMinor !== undefined && refundedMinor > amountMinor) return `amount_refunded ${refundedMinor} is more than the charge's ${amountMinor}`;
  const list = isObject(charge.refunds) && charge.refunds.has_more !== true && Array.isArray(charge.refunds.data) ? charge.refunds.data : undefined;
  let refunds: { id: string; amountMinor: number }[] | undefined = [];
  for (const refund of [...(list ?? [])].reverse()) {
    const refundId = isObject(refund) ? nonEmptyString(refund.id) : undefined;
    const refundMinor = isObject(refund) ? minorOf(refund.amount, currency, 'refund amount') : 'not a refund';
    // A failed or canceled refund gave nothing back; a list the service cannot read is not used at all.
    if (isObject(refund) && (refund.status === 'failed' || refund.status === 'canceled')) continue;
    if (refundId === undefined || typeof refundMinor === 'string') {
      refunds = undefined;
      break;
    }
    refunds.push({ id: refundId, amountMinor: refundMinor });
  }
  return { kind: 'refunds', chargeId: nonEmptyString(charge.id), refundedMinor, refunds: list === undefined ? undefined : refunds };
}

/** Stripe's dispute statuses in the service's three (decisions.md §5a): open ones need a response. */
const disputeStatusOf = (status: unknown): DisputeStatus => (status === 'won' || status === 'lost' ? status : 'needs_response');

/** A dispute: its id, amount, outcome, and the processor's fee (on the balance transactions that withdrew the money). */
function disputeOf(dispute: JsonObject, currency: CurrencyCode): PaymentChange | string {
  const disputeId = nonEmptyString(dispute.id);
  if (disputeId === undefined) return 'the dispute has no id';
  const amountMinor = minorOf(dispute.amount, currency, 'dispute amount');
  if (typeof amountMinor === 'string') return amountMinor;
  if (amountMinor === 0) return 'a dispute of no amount';
  let feeMinor: number | null = null;
  for (const balance of Array.isArray(dispute.balance_transactions) ? dispute.balance_transactions : []) {
    if (!isObject(balance) || typeof balance.amount !== 'number' || balance.amount >= 0 || balance.fee === undefined) continue;
    // A balance transaction is in the account's settlement currency, which may not be the dispute's: a fee in another
    // currency is not charged to this payment's merchant on a guessed rate. The dispute itself still moves its money.
    if (balance.currency !== undefined && (typeof balance.currency !== 'string' || normalizeCurrency(balance.currency) !== currency)) {
      return { kind: 'dispute', dispute: { id: disputeId, amountMinor, feeMinor: null, status: disputeStatusOf(dispute.status) }, feeInOtherCurrency: true };
    }
    const fee = minorOf(balance.fee, currency, 'dispute fee');
    if (typeof fee === 'string') return fee;
    feeMinor = (feeMinor ?? 0) + fee;
  }
  return { kind: 'dispute', dispute: { id: disputeId, amountMinor, feeMinor, status: disputeStatusOf(dispute.status) } };
}

/** `payment_intent` is an id, or the intent itself when the event was rendered with it expanded. */
function intentIdOf(value: unknown): string | undefined {
  return isObject(value) ? nonEmptyString(value.id) : nonEmptyString(value);
}

/** The event's `currency` (Stripe writes it lower-case) and `amount` (Stripe's units), converted at the edge. */
function moneyOf(data: JsonObject, options: { amountIsThePayment: boolean }): EventMoney | undefined {
  if (data.currency === undefined && data.amount === undefined) return undefined;
  const currency = typeof data.currency === 'string' ? normalizeCurrency(data.currency) : undefined;
  if (currency === undefined) return { readable: false, reason: `currency ${JSON.stringify(data.currency)} is not one the service takes` };
  if (!options.amountIsThePayment || data.amount === undefined) return { readable: true, currency, amountMinor: undefined };
  if (typeof data.amount !== 'number' || !Number.isSafeInteger(data.amount)) {
    return { readable: false, reason: `amount ${JSON.stringify(data.amount)} is not a whole number` };
  }
  const amount = fromStripeAmount(data.amount, currency);
  return amount.ok ? { readable: true, currency, amountMinor: amount.minor } : { readable: false, reason: amount.reason };
}
