/**
 * The ledger (decisions.md §5a): every movement of a payment's money after its sale is an immutable entry keyed
 * by its cause. Pure: the processor-event use case merges what an event says into the transaction's facts, and
 * this module says which entries those facts call for; the store writes the new ones with the status move.
 *
 * Why the entries do not depend on the order in which events arrive:
 * - the facts only grow (a larger cumulative refund, a new dispute, a dispute closing), and merging is
 *   commutative (the largest refund level, the union of disputes, a closed status over an open one);
 * - each entry's amounts are a function of its own key and the payment alone, never of the entries before it.
 *   A payment of amount A is a stack of layers (0, A]: refunds take the bottom (a refund step from cumulative
 *   c0 to c1 reverses the layer (c0, c1]); a dispute of D takes the top (A − D, A]. The reversal of the layer
 *   (a, b] is `rev(b) − rev(a)`, where `rev(x)` reverses each of the gross, processor fee, platform fee and
 *   service earning by `round_half_up(term × x / A)` and the net by the gross less the two fees. So steps add up
 *   exactly (refunded in full: the whole payment reversed to the unit), and a partial refund plus a dispute of
 *   the rest tile the payment exactly too.
 * So every permutation of a payment's events (with duplicates) ends with the same facts, hence the same entries.
 */
import { type DisputeFacts, type DisputeStatus, NO_REVERSALS, type RefundStep, type ReversalFacts } from './reversal-facts';
import type { FeeBreakdown, Transaction, TransactionStatus } from './transaction';

export const ENTRY_TYPES = ['transaction', 'refund', 'chargeback', 'dispute_fee', 'dispute_reinstated'] as const;
/** The report's row types: `transaction` is the sale itself. */
export type EntryType = (typeof ENTRY_TYPES)[number];

export { DISPUTE_STATUSES, type DisputeFacts, type DisputeStatus, NO_REVERSALS, type RefundStep, type ReversalFacts } from './reversal-facts';

/** What one processor event says about the payment, in the service's terms (minor units of the payment's currency). */
export type PaymentChange =
  | { kind: 'outcome'; status: 'succeeded' | 'failed' | 'abandoned' }
  /** `refunds`: the charge's refunds, oldest first, when the event lists all of them (their sum is `refundedMinor`). */
  | { kind: 'refunds'; chargeId: string | undefined; refundedMinor: number; refunds: { id: string; amountMinor: number }[] | undefined }
  /** `feeInOtherCurrency`: the processor charged a fee in another currency than the dispute's; it is not recorded. */
  | { kind: 'dispute'; dispute: DisputeFacts; feeInOtherCurrency?: boolean };

/** An immutable money movement of one payment (minor units; reversals negative). */
export interface LedgerEntry {
  type: EntryType;
  /** Unique within its payment and stable: `sale`, `refund#<level>`, `chargeback#<dispute>` ... */
  key: string;
  /** The processor object that caused it (payment intent, refunds, dispute). */
  cause: string;
  svcTxId: string;
  partnerId: string;
  clientId: string;
  partnerReference: string;
  currency: Transaction['currency'];
  /** The payment's creation: settlement takes an entry when its payment is eligible. */
  txCreatedAt: string;
  /** When the entry was written (the sale: the payment's creation). */
  createdAt: string;
  grossMinor: number;
  processorFeeMinor: number;
  platformFeeMinor: number;
  svcEarningMinor: number;
  netMinor: number;
}

type Amounts = Pick<LedgerEntry, 'grossMinor' | 'processorFeeMinor' | 'platformFeeMinor' | 'svcEarningMinor' | 'netMinor'>;

/** `round_half_up(term × level / amount)`, exact (BigInt: the product passes 2^53). */
function share(term: number, level: number, amount: number): number {
  return Number((2n * BigInt(term) * BigInt(level) + BigInt(amount)) / (2n * BigInt(amount)));
}

/** The reversal of the bottom `level` of a payment: what a cumulative refund of `level` takes back. */
function reversalAt(amountMinor: number, fees: FeeBreakdown, level: number): Amounts {
  const processorFeeMinor = share(fees.processorFeeMinor, level, amountMinor);
  const platformFeeMinor = share(fees.platformFeeMinor, level, amountMinor);
  return {
    grossMinor: level,
    processorFeeMinor,
    platformFeeMinor,
    svcEarningMinor: share(fees.svcEarningAmountMinor, level, amountMinor),
    netMinor: level - processorFeeMinor - platformFeeMinor,
  };
}

/** `-x`, but never `-0`. */
const negate = (x: number) => (x === 0 ? 0 : -x);

const AMOUNT_FIELDS = ['grossMinor', 'processorFeeMinor', 'platformFeeMinor', 'svcEarningMinor', 'netMinor'] as const;

function mapAmounts(a: Amounts, f: (field: (typeof AMOUNT_FIELDS)[number], value: number) => number): Amounts {
  return Object.fromEntries(AMOUNT_FIELDS.map((field) => [field, f(field, a[field])])) as unknown as Amounts;
}

/** The reversal entry amounts of the layer (from, to] of the payment: negative. */
function layerReversal(amountMinor: number, fees: FeeBreakdown, from: number, to: number): Amounts {
  const upper = reversalAt(amountMinor, fees, to);
  const lower = reversalAt(amountMinor, fees, from);
  return mapAmounts(upper, (field, value) => negate(value - lower[field]));
}

/** The sale: the payment's gross and its split, as computed when it succeeded. */
export function saleAmounts(amountMinor: number, fees: FeeBreakdown): Amounts {
  return {
    grossMinor: amountMinor,
    processorFeeMinor: fees.processorFeeMinor,
    platformFeeMinor: fees.platformFeeMinor,
    svcEarningMinor: fees.svcEarningAmountMinor,
    netMinor: fees.netAmountMinor,
  };
}

/** Levels are zero-padded in keys, so a payment's refund entries sort in their order. */
const levelKey = (level: number) => String(level).padStart(12, '0');

/**
 * Every entry the facts call for, the sale excluded (it is the transaction itself): nothing before the payment
 * succeeded (no split yet). Entries of legacy facts exist as the adjustments written before the ledger.
 */
export function reversalEntries(tx: Transaction, fees: FeeBreakdown | null, facts: ReversalFacts, now: string): LedgerEntry[] {
  if (fees === null) return [];
  const entry = (type: EntryType, key: string, cause: string, amounts: Amounts): LedgerEntry => ({
    type,
    key,
    cause,
    svcTxId: tx.svcTxId,
    partnerId: tx.partnerId,
    clientId: tx.clientId,
    partnerReference: tx.partnerReference,
    currency: tx.currency,
    txCreatedAt: tx.createdAt,
    createdAt: now,
    ...amounts,
  });
  const entries: LedgerEntry[] = [];
  let from = 0;
  for (const step of facts.refundSteps) {
    if (step.legacy !== true) {
      const cause = step.refundIds.length > 0 ? step.refundIds.join(' ') : (tx.processorPaymentIntentId ?? tx.svcTxId);
      entries.push(entry('refund', `refund#${levelKey(step.toMinor)}`, cause, layerReversal(tx.amountMinor, fees, from, step.toMinor)));
    }
    from = step.toMinor;
  }
  for (const dispute of facts.disputes) {
    const reversal = layerReversal(tx.amountMinor, fees, tx.amountMinor - dispute.amountMinor, tx.amountMinor);
    if (dispute.legacy !== true) entries.push(entry('chargeback', `chargeback#${dispute.id}`, dispute.id, reversal));
    if (dispute.feeMinor !== null && dispute.feeMinor > 0) {
      const fee = dispute.feeMinor;
      entries.push(entry('dispute_fee', `dispute_fee#${dispute.id}`, dispute.id, { grossMinor: 0, processorFeeMinor: fee, platformFeeMinor: 0, svcEarningMinor: 0, netMinor: -fee }));
    }
    if (dispute.status === 'won') entries.push(entry('dispute_reinstated', `dispute_reinstated#${dispute.id}`, dispute.id, mapAmounts(reversal, (_, value) => negate(value))));
  }
  return entries;
}

/** The facts with what one event says merged in; `undefined` when it says nothing new. */
export function mergeFacts(facts: ReversalFacts, change: PaymentChange): ReversalFacts | undefined {
  if (change.kind === 'outcome') return undefined;
  if (change.kind === 'refunds') {
    if (change.refundedMinor <= facts.refundedMinor) return undefined;
    return { ...facts, refundedMinor: change.refundedMinor, refundSteps: [...facts.refundSteps, ...newSteps(facts.refundedMinor, change)] };
  }
  const incoming = change.dispute;
  const index = facts.disputes.findIndex((known) => known.id === incoming.id || (known.legacy === true && known.id === ''));
  if (index < 0) return { ...facts, disputes: [...facts.disputes, incoming] };
  const known = facts.disputes[index] as DisputeFacts;
  const merged: DisputeFacts = {
    ...known,
    id: incoming.id,
    feeMinor: known.feeMinor ?? incoming.feeMinor,
    // A closed dispute stays closed: an older `needs_response` arriving late changes nothing.
    status: known.status === 'needs_response' ? incoming.status : known.status,
  };
  if (merged.id === known.id && merged.feeMinor === known.feeMinor && merged.status === known.status) return undefined;
  return { ...facts, disputes: facts.disputes.map((dispute, i) => (i === index ? merged : dispute)) };
}

/**
 * The steps from the recorded level up to the event's: one per refund when the event lists the charge's refunds
 * (their running sums are the same in every event, so each refund is its own step whatever the order), else one
 * step to the new cumulative amount.
 */
function newSteps(recorded: number, change: Extract<PaymentChange, { kind: 'refunds' }>): RefundStep[] {
  const steps: RefundStep[] = [];
  if (change.refunds !== undefined) {
    let level = 0;
    for (const refund of change.refunds) {
      level += refund.amountMinor;
      // A refund wholly below the recorded level is recorded; one that straddles it (a step was made without the
      // list) gives its rest as a step.
      if (level > recorded) steps.push({ toMinor: level, refundIds: [refund.id] });
    }
    if (level === change.refundedMinor) return steps;
  }
  return [{ toMinor: change.refundedMinor, refundIds: change.chargeId === undefined ? [] : [change.chargeId] }];
}

/**
 * The status of a payment that succeeded, given its reversals: a dispute wins over a refund in full (a cardholder
 * may dispute a refunded charge; the status says a dispute exists, in any order of the events), a refund in full
 * makes it `refunded`, anything less leaves it `succeeded`. Any other status is returned as it is.
 */
export function statusWithReversals(status: TransactionStatus, amountMinor: number, facts: ReversalFacts): TransactionStatus {
  if (status !== 'succeeded') return status;
  if (facts.disputes.length > 0) return 'chargeback';
  return facts.refundedMinor >= amountMinor ? 'refunded' : 'succeeded';
}

/** The transaction resource's `disputeStatus`: the latest dispute's, or `null` without one. */
export const disputeStatusOf = (facts: ReversalFacts): DisputeStatus | null => facts.disputes.at(-1)?.status ?? null;

export const disputedMinorOf = (facts: ReversalFacts): number => facts.disputes.reduce((sum, dispute) => sum + dispute.amountMinor, 0);

/**
 * The facts of a transaction written before the ledger: a refunded one was reversed whole, a charged-back one
 * too, by an adjustment (or by leaving settlement unpaid); record that, so no later event reverses it again.
 */
export function legacyFacts(status: TransactionStatus, amountMinor: number): ReversalFacts {
  if (status === 'refunded') return { refundedMinor: amountMinor, refundSteps: [{ toMinor: amountMinor, refundIds: [], legacy: true }], disputes: [] };
  if (status === 'chargeback') return { ...NO_REVERSALS, disputes: [{ id: '', amountMinor, feeMinor: null, status: 'needs_response', legacy: true }] };
  return NO_REVERSALS;
}
