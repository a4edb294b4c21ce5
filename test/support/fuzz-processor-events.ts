/**
 * Arbitrary processor events for the webhook fuzz suite (issue 11): Stripe-shaped envelopes whose type, id,
 * object, money, refund flag and metadata vary, aimed at a transaction of the suite or at nothing, plus envelopes
 * that are not events at all. A plan is plain data (so it shrinks); `renderEvent` turns it into the exact body the
 * sandbox would sign, given the transactions it may name.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { SANDBOX_API_VERSION } from '../../infra/local/processor-sandbox-events';
import { jsonValue, oddString, serialize, type Json, type JsonObject } from './fuzz-json';
import { ALLOWED_MOVES as LIFECYCLE_MOVES } from './reliability-lifecycle';

/** decisions.md §5: the mapped event types and the status each moves a transaction to. */
export const STATUS_OF_TYPE: Readonly<Record<string, string>> = {
  'payment_intent.succeeded': 'succeeded',
  'payment_intent.payment_failed': 'failed',
  'payment_intent.canceled': 'abandoned',
  'charge.refunded': 'refunded',
  'charge.dispute.created': 'chargeback',
};
export const MAPPED_TYPES = Object.keys(STATUS_OF_TYPE);
const UNMAPPED_TYPES = ['charge.succeeded', 'payment_intent.created', 'payment_intent.processing', 'charge.dispute.closed', 'customer.created', 'PAYMENT_INTENT.SUCCEEDED', 'payment_intent.succeeded ', '__proto__', 'constructor', 'toString', 'hasOwnProperty'];

/** decisions.md §5: the only moves a processor event may make (the reliability suites' own copy), by any status name. */
export const ALLOWED_MOVES: Readonly<Record<string, readonly string[]>> = LIFECYCLE_MOVES;

/** What the event's object says about the money. */
export type AmountPlan = { kind: 'match' } | { kind: 'absent' } | { kind: 'other'; value: Json };
export type CurrencyPlan = { kind: 'lower' } | { kind: 'upper' } | { kind: 'absent' } | { kind: 'other'; value: Json };
export type IdPlan = { kind: 'fresh' } | { kind: 'reuse'; pick: number } | { kind: 'odd'; value: Json };

export interface EventPlan {
  /**
   * `faithful`: what the processor itself would send about the run's transaction (fresh id, exact money, a full
   * refund, the object its type calls for); only the type, metadata, extra keys, layout and header vary, so that
   * sequences walk the lifecycle (pending -> succeeded -> refunded ...) often. `near`: a faithful event with one
   * thing changed (`perturb`). `wild`: everything drawn at random.
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
    { weight: 4, arbitrary: fc.constant('payment_intent.succeeded') },
    { weight: 3, arbitrary: fc.constant('charge.refunded') },
    { weight: 2, arbitrary: fc.constant('charge.dispute.created') },
    { weight: 2, arbitrary: fc.constant('payment_intent.payment_failed') },
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
    refunded: true,
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
      return { ...faithful, type: 'charge.refunded', refunded: plan.refunded === true ? false : plan.refunded };
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
}

export interface RenderedEvent {
  bytes: Buffer;
  /** The envelope's `id` and `type` as sent (`undefined` when not a string). */
  id: Json | undefined;
  type: string;
  /** The transaction the object names, if one of ours. */
  names: Followed | undefined;
  /** The event is exactly what the processor would send for its mapped type about `names` (money exact). */
  canonical: boolean;
  /** The money or refund flag rules it out of moving anything (decisions.md §5). */
  mustNotMove: string | undefined;
}

/** Keys whose values the plan decides (never overwritten by `extra`). */
const MEANINGFUL_KEYS = new Set(['id', 'object', 'amount', 'currency', 'payment_intent', 'refunded', 'metadata']);

const randomIntent = () => `pi_${randomUUID().replaceAll('-', '').slice(0, 24)}`;

function objectShape(plan: EventPlan): 'intent' | 'charge' | 'dispute' | 'random' {
  if (plan.shape !== 'auto') return plan.shape;
  if (plan.type.startsWith('payment_intent.')) return 'intent';
  if (plan.type === 'charge.dispute.created') return 'dispute';
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
    if (typeof amount === 'number') put('amount_refunded', plan.refunded === true ? amount : 1);
  } else if (shape === 'dispute') {
    put('id', `dp_${randomUUID().replaceAll('-', '').slice(0, 24)}`);
    put('object', 'dispute');
    if (intentRef !== undefined) put('payment_intent', intentRef);
    put('reason', 'fraudulent');
  } else {
    for (const [key, value] of Object.entries(plan.metadata)) put(key, value);
    if (intentRef !== undefined) put(plan.expanded ? 'payment_intent' : 'id', intentRef);
  }
  if (amount !== undefined) put('amount', amount);
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
  const mapped = Object.hasOwn(STATUS_OF_TYPE, plan.type);
  const shapeFits = shape === (plan.type.startsWith('payment_intent.') ? 'intent' : plan.type === 'charge.dispute.created' ? 'dispute' : 'charge');
  const aboutOurs = isEvent && mapped && shapeFits && names !== undefined;
  const isDispute = plan.type === 'charge.dispute.created';
  const currencyOk = typeof currency === 'string' && currency.toUpperCase() === money.currency;
  const amountOk = amount === undefined || isDispute || amount === money.stripeAmount;
  const refundOk = plan.type !== 'charge.refunded' || plan.refunded === true;
  const canonical = aboutOurs && (plan.currency.kind === 'lower' || plan.currency.kind === 'upper') && (plan.amount.kind === 'match' || plan.amount.kind === 'absent' || isDispute) && amountOk && refundOk;
  let mustNotMove: string | undefined;
  if (aboutOurs) {
    if (currency !== undefined && !(typeof currency === 'string' && currency.trim().toUpperCase() === money.currency)) mustNotMove = `currency ${JSON.stringify(currency)} is not ${money.currency}`;
    else if (currencyOk && !amountOk) mustNotMove = `amount ${JSON.stringify(amount)} is not ${money.stripeAmount}`;
    else if (!refundOk) mustNotMove = `a charge.refunded with refunded ${JSON.stringify(plan.refunded)} (not a full refund)`;
  }
  return { bytes, id: typeof id === 'string' ? id : undefined, type: plan.type, names, canonical, mustNotMove };
}
