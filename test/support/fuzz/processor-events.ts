/**
 * Arbitrary processor events for the webhook fuzz suite: Stripe-shaped envelopes whose type, id,
 * object, money, refunds, disputes and metadata vary, aimed at a transaction of the suite or at nothing, plus
 * envelopes that are not events at all. A plan is plain data (so it shrinks); `renderEvent` turns it into the exact
 * body the sandbox would sign, given the transactions it may name, and reads that body back as decisions.md §5 and
 * §5a say the service must (`readEvent`, written out here on its own, not imported from lib/): which transaction it
 * is about and what it says about its money, for the suite's model of the ledger (`../reliability/lifecycle.ts`).
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { SANDBOX_API_VERSION } from '../../../infra/local/sandbox/processor/events';
import { jsonValue, oddString, serialize, type Json, type JsonObject } from './json';
import { ALLOWED_MOVES as LIFECYCLE_MOVES, type Said } from '../reliability/lifecycle';

/** decisions.md §5: the payment intent events and the outcome each reports. */
export const OUTCOME_OF_TYPE: Readonly<Record<string, 'succeeded' | 'failed' | 'abandoned'>> = {
  'payment_intent.succeeded': 'succeeded',
  'payment_intent.payment_failed': 'failed',
  'payment_intent.canceled': 'abandoned',
};
/** decisions.md §5, §5a: every event type the service reads (the rest are acknowledged and ignored). */
export const MAPPED_TYPES = [...Object.keys(OUTCOME_OF_TYPE), 'charge.refunded', 'charge.dispute.created', 'charge.dispute.closed'];
const DISPUTE_TYPES = new Set(['charge.dispute.created', 'charge.dispute.closed']);
const UNMAPPED_TYPES = ['charge.succeeded', 'payment_intent.created', 'payment_intent.processing', 'charge.dispute.updated', 'customer.created', 'PAYMENT_INTENT.SUCCEEDED', 'payment_intent.succeeded ', '__proto__', 'constructor', 'toString', 'hasOwnProperty'];

/** decisions.md §5: the only moves a processor event may make (the reliability suites' own copy), by any status name. */
export const ALLOWED_MOVES: Readonly<Record<string, readonly string[]>> = LIFECYCLE_MOVES;

/** What the event's object says about the money. */
export type AmountPlan = { kind: 'match' } | { kind: 'absent' } | { kind: 'other'; value: Json };
export type CurrencyPlan = { kind: 'lower' } | { kind: 'upper' } | { kind: 'absent' } | { kind: 'other'; value: Json };
export type IdPlan = { kind: 'fresh' } | { kind: 'reuse'; pick: number } | { kind: 'odd'; value: Json };

export interface EventPlan {
  /**
   * `faithful`: what the processor itself would send about the run's transaction (fresh id, exact money, a full or
   * partial cumulative refund, a dispute of all or part of it, opened or closed, with or without a fee, the object
   * its type calls for); only the type, metadata, extra keys, layout and header vary, so that sequences walk the
   * lifecycle (pending -> succeeded -> refunded ...) often, and refunds and disputes arrive before the success too.
   * `near`: a faithful event with one thing changed (`perturb`). `wild`: everything drawn at random.
   */
  mode: 'faithful' | 'near' | 'wild';
  perturb: Perturbation;
  /** The type of a faithful event: success and reversals weighted up, so runs reach the later states. */
  lifecycleType: string;
  /** Which payment intent the object names: the run's transaction, an earlier one, one nobody has, or none. */
  target: 'run' | 'older' | 'unknown' | 'none';
  olderPick: number;
  type: string;
  /** The object's shape: the one the type calls for (`auto`), or another. */
  shape: 'auto' | 'intent' | 'charge' | 'dispute' | 'random';
  id: IdPlan;
  amount: AmountPlan;
  currency: CurrencyPlan;
  refunded: Json | 'absent';
  /** A charge's cumulative `amount_refunded`: all of it, a share (per mille of the amount), 1 unit, absent, or anything. */
  refundLevel: { kind: 'full' } | { kind: 'share'; permille: number } | { kind: 'one' } | { kind: 'absent' } | { kind: 'other'; value: Json };
  /** A dispute: a share of the payment (per mille; 1000 is all of it); its fee (Stripe's units of the smallest step), or none. */
  disputePermille: number;
  disputeFee: number | null;
  /** A closed dispute's `status` (Stripe's: `won`, `lost`, or `warning_closed` for an inquiry). */
  disputeOutcome: 'won' | 'lost' | 'warning_closed';
  /** Which of the run's earlier disputes a closed (or repeated) dispute event is about; past them, a new one. */
  disputePick: number;
  /** `payment_intent` of a charge or dispute given as the expanded intent object. */
  expanded: boolean;
  metadata: JsonObject;
  extra: JsonObject;
  envelope: 'event' | 'no-data' | 'data-not-object' | 'thin-v2' | 'arbitrary' | 'bytes';
  arbitrary: Json;
  bytes: number[];
  layout: 'pretty' | 'compact' | 'escaped';
  header: 'processor-signature' | 'stripe-signature' | 'both';
  ageSeconds: number;
}

const threeLetters = fc.stringMatching(/^[a-zA-Z]{3}$/);

/** What a near-faithful event changes. */
export type Perturbation = 'target' | 'type' | 'shape' | 'id' | 'amount' | 'currency' | 'refunded' | 'expanded' | 'envelope';
const PERTURBATIONS: readonly Perturbation[] = ['target', 'type', 'shape', 'id', 'amount', 'amount', 'currency', 'currency', 'refunded', 'expanded', 'envelope'];

const anyEventPlan = fc.record({
  mode: fc.oneof({ weight: 4, arbitrary: fc.constant('faithful' as const) }, { weight: 4, arbitrary: fc.constant('near' as const) }, { weight: 2, arbitrary: fc.constant('wild' as const) }),
  perturb: fc.constantFrom(...PERTURBATIONS),
  lifecycleType: fc.oneof(
    { weight: 5, arbitrary: fc.constant('payment_intent.succeeded') },
    { weight: 4, arbitrary: fc.constant('charge.refunded') },
    { weight: 2, arbitrary: fc.constant('charge.dispute.created') },
    { weight: 2, arbitrary: fc.constant('charge.dispute.closed') },
    { weight: 1, arbitrary: fc.constant('payment_intent.payment_failed') },
    { weight: 1, arbitrary: fc.constant('payment_intent.canceled') },
  ),
  target: fc.oneof({ weight: 7, arbitrary: fc.constant('run' as const) }, { weight: 2, arbitrary: fc.constant('older' as const) }, fc.constant('unknown' as const), fc.constant('none' as const)),
  olderPick: fc.nat(),
  type: fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...MAPPED_TYPES) }, { weight: 2, arbitrary: fc.constantFrom(...UNMAPPED_TYPES) }, oddString(20)),
  shape: fc.oneof({ weight: 8, arbitrary: fc.constant('auto' as const) }, fc.constantFrom('intent' as const, 'charge' as const, 'dispute' as const, 'random' as const)),
  id: fc.oneof(
    { weight: 6, arbitrary: fc.constant({ kind: 'fresh' as const }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('reuse' as const), pick: fc.nat() }) },
    fc.record({ kind: fc.constant('odd' as const), value: fc.oneof(jsonValue, oddString(30)) }),
  ),
  amount: fc.oneof(
    { weight: 7, arbitrary: fc.constant({ kind: 'match' as const }) },
    fc.constant({ kind: 'absent' as const }),
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('other' as const), value: fc.oneof(fc.integer({ min: -1, max: 10_000_000 }), jsonValue) }) },
  ),
  currency: fc.oneof(
    { weight: 6, arbitrary: fc.constant({ kind: 'lower' as const }) },
    { weight: 1, arbitrary: fc.constant({ kind: 'upper' as const }) },
    fc.constant({ kind: 'absent' as const }),
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('other' as const), value: fc.oneof(threeLetters, fc.constantFrom('usd', 'jpy', 'kwd', 'eur', 'isk', 'qqq'), jsonValue) }) },
  ),
  refunded: fc.oneof({ weight: 5, arbitrary: fc.constant(true) }, fc.constant(false), fc.constant('absent' as const), jsonValue),
  refundLevel: fc.oneof(
    { weight: 3, arbitrary: fc.constant({ kind: 'full' as const }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('share' as const), permille: fc.integer({ min: 1, max: 999 }) }) },
    fc.constant({ kind: 'one' as const }),
    fc.constant({ kind: 'absent' as const }),
    fc.record({ kind: fc.constant('other' as const), value: fc.oneof(fc.integer({ min: -1, max: 10_000_000 }), jsonValue) }),
  ),
  disputePermille: fc.oneof({ weight: 3, arbitrary: fc.constant(1000) }, fc.integer({ min: 0, max: 999 })),
  disputeFee: fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 2_000 })),
  disputeOutcome: fc.constantFrom('won' as const, 'lost' as const, 'warning_closed' as const),
  disputePick: fc.nat({ max: 3 }),
  expanded: fc.boolean(),
  metadata: fc.dictionary(oddString(8), jsonValue, { maxKeys: 3 }) as fc.Arbitrary<JsonObject>,
  extra: fc.dictionary(fc.oneof(oddString(8), fc.constantFrom('amount_received', 'status', 'latest_charge', 'livemode', '__proto__', 'constructor')), jsonValue, { maxKeys: 2 }) as fc.Arbitrary<JsonObject>,
  envelope: fc.oneof({ weight: 20, arbitrary: fc.constant('event' as const) }, fc.constantFrom('no-data' as const, 'data-not-object' as const, 'thin-v2' as const, 'arbitrary' as const, 'bytes' as const)),
  arbitrary: jsonValue,
  bytes: fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 60 }),
  layout: fc.constantFrom('pretty' as const, 'compact' as const, 'escaped' as const),
  header: fc.oneof({ weight: 3, arbitrary: fc.constant('processor-signature' as const) }, fc.constantFrom('stripe-signature' as const, 'both' as const)),
  ageSeconds: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, fc.integer({ min: 1, max: 240 })),
});

export const eventPlan: fc.Arbitrary<EventPlan> = anyEventPlan.map((plan): EventPlan => {
  if (plan.mode === 'wild') return plan;
  const faithful: EventPlan = {
    ...plan,
    target: 'run',
    type: plan.lifecycleType,
    shape: 'auto',
    id: { kind: 'fresh' },
    amount: { kind: 'match' },
    currency: plan.currency.kind === 'upper' ? plan.currency : { kind: 'lower' },
    refunded: plan.refundLevel.kind === 'full',
    refundLevel: plan.refundLevel.kind === 'share' ? plan.refundLevel : { kind: 'full' },
    expanded: false,
    envelope: 'event',
  };
  if (plan.mode === 'faithful') return faithful;
  // Near: the faithful event with the one perturbed part drawn at random (it may still come out faithful).
  switch (plan.perturb) {
    case 'amount':
      return { ...faithful, amount: plan.amount.kind === 'match' ? { kind: 'other', value: 1 + (plan.olderPick % 9_999) } : plan.amount };
    case 'currency':
      return { ...faithful, currency: plan.currency.kind === 'lower' || plan.currency.kind === 'upper' ? { kind: 'other', value: 'gbp' } : plan.currency };
    case 'refunded':
      return { ...faithful, type: 'charge.refunded', refunded: plan.refunded, refundLevel: plan.refundLevel };
    case 'type':
      return { ...faithful, type: plan.type };
    default:
      return { ...faithful, [plan.perturb]: plan[plan.perturb] };
  }
});

/** A transaction the suite created and follows. */
export interface Followed {
  svcTxId: string;
  intentId: string;
  /** Upper-case, as stored. */
  currency: string;
  /** Its amount in Stripe's units (what a real event about it carries). */
  stripeAmount: number;
  /** Stripe's units per minor unit of the currency (ISK: 100, two decimals at Stripe, none in ISO 4217; else 1). */
  stripeScale: number;
  /** The disputes events were rendered about (id and Stripe amount), so a later event can close one. */
  disputes: Array<{ id: string; stripeAmount: number }>;
}

/** What the service must make of an event (decisions.md §3, §5, §5a), read from its bytes as the spec says. */
export type Reading =
  | { kind: 'invalid' }
  | { kind: 'ignored' }
  | { kind: 'no-intent' }
  | { kind: 'unknown-intent' }
  /** About one of ours (200 with its status); `said` is `null` when its money cannot be the transaction's (it changes nothing). */
  | { kind: 'about'; followed: Followed; eventId: string; said: Said | null };

export interface RenderedEvent {
  bytes: Buffer;
  /** The envelope's `id` and `type` as sent (`undefined` when not a string). */
  id: Json | undefined;
  type: string;
  /** The transaction the object names, if one of ours. */
  names: Followed | undefined;
  /** The event is exactly what the processor would send for its mapped type about `names` (money exact). */
  canonical: boolean;
  /** What the service must make of it; `undefined` for bytes that are not JSON text (nothing of ours can change). */
  reading: Reading | undefined;
}

/** Keys whose values the plan decides (never overwritten by `extra`). */
const MEANINGFUL_KEYS = new Set(['id', 'object', 'amount', 'currency', 'payment_intent', 'refunded', 'metadata']);

const randomIntent = () => `pi_${randomUUID().replaceAll('-', '').slice(0, 24)}`;

function objectShape(plan: EventPlan): 'intent' | 'charge' | 'dispute' | 'random' {
  if (plan.shape !== 'auto') return plan.shape;
  if (plan.type.startsWith('payment_intent.')) return 'intent';
  if (DISPUTE_TYPES.has(plan.type)) return 'dispute';
  if (plan.type.startsWith('charge.')) return 'charge';
  return 'random';
}

/**
 * The event `plan` describes. `usedIds` are the event ids sent so far (a `reuse` picks one); `older` the
 * suite's earlier transactions.
 */
export function renderEvent(plan: EventPlan, run: Followed, older: readonly Followed[], usedIds: readonly string[]): RenderedEvent {
  const names = plan.target === 'run' ? run : plan.target === 'older' && older.length > 0 ? older[plan.olderPick % older.length] : undefined;
  const intentId = names?.intentId ?? (plan.target === 'none' ? undefined : randomIntent());
  const id: Json =
    plan.id.kind === 'fresh' || (plan.id.kind === 'reuse' && usedIds.length === 0)
      ? `evt_${randomUUID().replaceAll('-', '')}`
      : plan.id.kind === 'reuse'
        ? (usedIds[plan.id.pick % usedIds.length] as string)
        : plan.id.value;

  const shape = objectShape(plan);
  const object: JsonObject = {};
  const put = (key: string, value: Json) => Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  const money = names ?? run;
  const amount: Json | undefined = plan.amount.kind === 'match' ? money.stripeAmount : plan.amount.kind === 'other' ? plan.amount.value : undefined;
  const currency: Json | undefined =
    plan.currency.kind === 'lower' ? money.currency.toLowerCase() : plan.currency.kind === 'upper' ? money.currency : plan.currency.kind === 'other' ? plan.currency.value : undefined;
  const intentRef: Json | undefined = intentId === undefined ? undefined : plan.expanded ? { id: intentId, object: 'payment_intent' } : intentId;

  // Extra keys first, none of those that carry meaning: what the object says is what the oracle below reads.
  for (const [key, value] of Object.entries(plan.extra)) if (!MEANINGFUL_KEYS.has(key)) put(key, value);
  if (shape === 'intent') {
    if (intentId !== undefined) put('id', intentId);
    put('object', 'payment_intent');
    put('status', plan.type === 'payment_intent.succeeded' ? 'succeeded' : plan.type === 'payment_intent.canceled' ? 'canceled' : 'requires_payment_method');
  } else if (shape === 'charge') {
    put('id', `ch_${randomUUID().replaceAll('-', '').slice(0, 24)}`);
    put('object', 'charge');
    if (intentRef !== undefined) put('payment_intent', intentRef);
    if (plan.refunded !== 'absent') put('refunded', plan.refunded);
    const level = plan.refundLevel;
    // A share is rounded down to what Stripe's units of the currency can state (at least one step).
    const step = money.stripeScale;
    if (typeof amount === 'number') {
      if (level.kind === 'full') put('amount_refunded', amount);
      else if (level.kind === 'share') put('amount_refunded', Math.max(step, Math.floor((amount * level.permille) / 1000 / step) * step));
      else if (level.kind === 'one') put('amount_refunded', 1);
      else if (level.kind === 'other') put('amount_refunded', level.value);
    }
  } else if (shape === 'dispute') {
    // A closed dispute, or a repeat, is about one of the run's earlier disputes when there is one to pick.
    const earlier = names === undefined || (plan.type !== 'charge.dispute.closed' && plan.disputePick !== 0) ? undefined : names.disputes[plan.disputePick];
    const disputeId = earlier?.id ?? `dp_${randomUUID().replaceAll('-', '').slice(0, 24)}`;
    const step = money.stripeScale;
    const disputed = earlier?.stripeAmount ?? (plan.disputePermille === 1000 ? money.stripeAmount : Math.floor((money.stripeAmount * plan.disputePermille) / 1000 / step) * step);
    put('id', disputeId);
    put('object', 'dispute');
    if (intentRef !== undefined) put('payment_intent', intentRef);
    put('reason', 'fraudulent');
    put('status', plan.type === 'charge.dispute.closed' ? plan.disputeOutcome : 'needs_response');
    if (plan.disputeFee !== null && disputed > 0) put('balance_transactions', [{ object: 'balance_transaction', amount: -disputed, fee: plan.disputeFee * step }]);
    if (plan.amount.kind === 'match' && names !== undefined) {
      put('amount', disputed);
      if (earlier === undefined) names.disputes.push({ id: disputeId, stripeAmount: disputed });
    }
  } else {
    for (const [key, value] of Object.entries(plan.metadata)) put(key, value);
    if (intentRef !== undefined) put(plan.expanded ? 'payment_intent' : 'id', intentRef);
  }
  // A dispute's amount is its own (above); a perturbed one is what the plan says.
  if (amount !== undefined && !(shape === 'dispute' && plan.amount.kind === 'match' && names !== undefined)) put('amount', amount);
  if (currency !== undefined) put('currency', currency);
  put('metadata', plan.metadata);

  const envelope: JsonObject = {
    id,
    object: plan.envelope === 'thin-v2' ? 'v2.core.event' : 'event',
    api_version: SANDBOX_API_VERSION,
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type: plan.type,
  };
  if (plan.envelope !== 'no-data') envelope.data = plan.envelope === 'data-not-object' ? [object] : { object };

  let text: string;
  if (plan.envelope === 'arbitrary') text = serialize(plan.arbitrary);
  else if (plan.layout === 'pretty') text = JSON.stringify(envelope, null, 2);
  else if (plan.layout === 'escaped') text = serialize(envelope, { escape: (i) => i % 3 === 0 });
  else text = serialize(envelope);
  const bytes = plan.envelope === 'bytes' ? Buffer.from(plan.bytes) : Buffer.from(text, 'utf8');

  // What decisions.md §5 says about this event, when it is an event about one of ours.
  const isEvent = plan.envelope === 'event' && typeof id === 'string' && id !== '';
  const mapped = MAPPED_TYPES.includes(plan.type);
  const shapeFits = shape === (plan.type.startsWith('payment_intent.') ? 'intent' : DISPUTE_TYPES.has(plan.type) ? 'dispute' : 'charge');
  const aboutOurs = isEvent && mapped && shapeFits && names !== undefined;
  const canonical = aboutOurs && (plan.currency.kind === 'lower' || plan.currency.kind === 'upper') && plan.amount.kind === 'match' && (plan.type !== 'charge.refunded' || plan.refundLevel.kind === 'full' || plan.refundLevel.kind === 'share');
  let reading: Reading | undefined;
  if (plan.envelope !== 'bytes') {
    try {
      reading = readEvent(JSON.parse(text) as unknown, [run, ...older]);
    } catch {
      reading = { kind: 'invalid' };
    }
  }
  return { bytes, id: typeof id === 'string' ? id : undefined, type: plan.type, names, canonical, reading };
}

// ---------------------------------------------------------------------------------------------------------------
// The spec's reading of an event (decisions.md §3, §5, §5a and Stripe's shapes), on its own.

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const nonEmpty = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** A whole, non-negative number of Stripe's units that is a whole number of the currency's minor units. */
function minorUnits(value: unknown, followed: Followed): number | undefined {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value % followed.stripeScale !== 0) return undefined;
  return value / followed.stripeScale;
}

/**
 * What the service must make of a verified body: not an event (400 INVALID_WEBHOOK_JSON), a type it ignores, an
 * event naming no intent (400 MISSING_INTENT_ID) or one of nobody's (404), or an event about one of `followed`
 * with what it says (`null`: its currency or amount is not the transaction's, or its refund or dispute is not
 * readable or larger than the payment, so it changes nothing).
 */
export function readEvent(parsed: unknown, followed: readonly Followed[]): Reading {
  if (!isObject(parsed) || parsed.object === 'v2.core.event') return { kind: 'invalid' };
  const eventId = nonEmpty(parsed.id);
  const type = nonEmpty(parsed.type);
  if (eventId === undefined || type === undefined) return { kind: 'invalid' };
  if (!MAPPED_TYPES.includes(type)) return { kind: 'ignored' };
  const object = isObject(parsed.data) && isObject(parsed.data.object) ? parsed.data.object : {};
  const outcome = Object.hasOwn(OUTCOME_OF_TYPE, type) ? OUTCOME_OF_TYPE[type] : undefined;
  // An inquiry (a dispute whose status is `warning_*`) moves no money: acknowledged and ignored, whatever it names.
  if (type.startsWith('charge.dispute.') && typeof object.status === 'string' && object.status.startsWith('warning_')) return { kind: 'ignored' };
  // The intent is the object itself on payment_intent.*, the object's payment_intent (an id, or expanded) on a charge or dispute.
  const intentRef = outcome !== undefined ? object.id : isObject(object.payment_intent) ? object.payment_intent.id : object.payment_intent;
  const intentId = nonEmpty(intentRef);
  if (intentId === undefined) return { kind: 'no-intent' };
  const payment = followed.find((candidate) => candidate.intentId === intentId);
  if (payment === undefined) return { kind: 'unknown-intent' };
  const about = (said: Said | null): Reading => ({ kind: 'about', followed: payment, eventId, said });

  // Money: the currency must be the transaction's (any case), and an amount that is the payment's must be its amount.
  const { currency, amount } = object;
  if (currency === undefined && amount === undefined) return about(outcome === undefined ? null : { kind: 'outcome', status: outcome });
  if (typeof currency !== 'string' || !/^[A-Za-z]{3}$/.test(currency) || currency.toUpperCase() !== payment.currency) return about(null);
  const paymentMinor = payment.stripeAmount / payment.stripeScale;
  if (outcome !== undefined || type === 'charge.refunded') {
    if (amount !== undefined && !(typeof amount === 'number' && Number.isSafeInteger(amount) && amount % payment.stripeScale === 0 && amount / payment.stripeScale === paymentMinor)) return about(null);
  }
  if (outcome !== undefined) return about({ kind: 'outcome', status: outcome });
  if (type === 'charge.refunded') {
    // The cumulative amount_refunded; an older charge without it, marked refunded, was refunded whole.
    const stated = object.amount_refunded ?? (object.refunded === true ? amount : undefined);
    const refundedMinor = minorUnits(stated, payment);
    return about(refundedMinor === undefined || refundedMinor > paymentMinor ? null : { kind: 'refund', refundedMinor });
  }
  const disputeId = nonEmpty(object.id);
  const disputedMinor = minorUnits(amount, payment);
  if (disputeId === undefined || disputedMinor === undefined || disputedMinor === 0 || disputedMinor > paymentMinor) return about(null);
  // The fee is on the balance transactions that withdrew the disputed money (negative amounts).
  let feeMinor: number | null = null;
  for (const balance of Array.isArray(object.balance_transactions) ? object.balance_transactions : []) {
    if (!isObject(balance) || typeof balance.amount !== 'number' || balance.amount >= 0 || balance.fee === undefined) continue;
    // A fee in another currency than the payment's is not charged on a guess: the dispute moves its money, without a fee.
    if (balance.currency !== undefined && (typeof balance.currency !== 'string' || balance.currency.toUpperCase() !== payment.currency)) {
      feeMinor = null;
      break;
    }
    const fee = minorUnits(balance.fee, payment);
    if (fee === undefined) return about(null);
    feeMinor = (feeMinor ?? 0) + fee;
  }
  const status = object.status === 'won' || object.status === 'lost' ? object.status : 'needs_response';
  return about({ kind: 'dispute', dispute: { id: disputeId, amountMinor: disputedMinor, feeMinor, status } });
}
