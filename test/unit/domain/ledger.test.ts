/**
 * The ledger (decisions.md §5a) under any order of a payment's processor events. Each case is a processor-side
 * history (a payment that may fail first and then succeed, partial or full refunds with cumulative amounts, a
 * dispute with an amount, a fee and an outcome); its Stripe-shaped events are delivered in a random order, each
 * possibly more than once, through the service's own event mapping and update planner, as the processor-event
 * use case applies them. The result is held to an oracle written here from the decision's text, not from the
 * implementation: the final status, the set of entries and their amounts, and what the merchant is owed.
 *
 * Seeds are fixed (LEDGER_SEED replays another), so a failure reproduces.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { type LedgerEntry, type PaymentChange } from '../../../lib/domain/ledger';
import { planPaymentUpdate, succeedsWith, type PartnerNotice } from '../../../lib/domain/payment-update';
import type { FeeBreakdown, Transaction } from '../../../lib/domain/transaction';
import { toProcessorEvent } from '../../../lib/processor/events';
import { seedFrom } from '../../support/seeds';
import { transactionFixture } from '../../support/transactions';

const SEED = seedFrom('LEDGER_SEED', 27_112_026);

// ---------------------------------------------------------------------------------------------------------
// The processor's side: one payment's history, and the events Stripe sends for it.

interface History {
  amount: number;
  fees: FeeBreakdown;
  failedFirst: boolean;
  refunds: number[];
  dispute: { amount: number; fee: number; outcome: 'open' | 'won' | 'lost' } | null;
}

interface StripeEvent {
  id: string;
  type: string;
  object: Record<string, unknown>;
}

const INTENT = 'pi_ledgerTest0001';
const CHARGE = 'ch_ledgerTest0001';

function eventsOf(history: History): StripeEvent[] {
  const intent = (status: string) => ({ id: INTENT, object: 'payment_intent', amount: history.amount, currency: 'usd', status });
  const events: StripeEvent[] = [];
  if (history.failedFirst) events.push({ id: 'evt_failed', type: 'payment_intent.payment_failed', object: intent('requires_payment_method') });
  events.push({ id: 'evt_succeeded', type: 'payment_intent.succeeded', object: intent('succeeded') });
  const refunds: { id: string; object: 'refund'; amount: number; status: 'succeeded' }[] = [];
  history.refunds.forEach((amount, i) => {
    refunds.unshift({ id: `re_${i}`, object: 'refund', amount, status: 'succeeded' });
    const refunded = refunds.reduce((sum, refund) => sum + refund.amount, 0);
    events.push({
      id: `evt_refund_${i}`,
      type: 'charge.refunded',
      object: {
        id: CHARGE,
        object: 'charge',
        amount: history.amount,
        amount_refunded: refunded,
        refunded: refunded === history.amount,
        currency: 'usd',
        payment_intent: INTENT,
        refunds: { object: 'list', data: refunds.map((refund) => ({ ...refund })), has_more: false, total_count: refunds.length },
      },
    });
  });
  const dispute = history.dispute;
  if (dispute !== null) {
    const object = (status: string) => ({
      id: 'dp_1',
      object: 'dispute',
      amount: dispute.amount,
      currency: 'usd',
      charge: CHARGE,
      payment_intent: INTENT,
      status,
      balance_transactions: [
        { id: 'txn_1', amount: -dispute.amount, fee: dispute.fee, net: -dispute.amount - dispute.fee },
        ...(status === 'won' ? [{ id: 'txn_2', amount: dispute.amount, fee: 0, net: dispute.amount }] : []),
      ],
    });
    events.push({ id: 'evt_dispute_created', type: 'charge.dispute.created', object: object('needs_response') });
    if (dispute.outcome !== 'open') events.push({ id: 'evt_dispute_closed', type: 'charge.dispute.closed', object: object(dispute.outcome) });
  }
  return events;
}

// ---------------------------------------------------------------------------------------------------------
// The service's side, as the processor-event use case applies events (minus the table).

interface Applied {
  transaction: Transaction;
  entries: LedgerEntry[];
  notices: PartnerNotice[];
}

function pendingTransaction(amount: number): Transaction {
  return transactionFixture({
    id: 'txn_1',
    svcTxId: 'svc_tx_ledger',
    partnerId: 'ptr_1',
    partnerName: 'Partner',
    clientId: 'merchant-1',
    clientName: 'Merchant',
    partnerReference: 'order-1',
    processorPaymentIntentId: INTENT,
    amountMinor: amount,
    createdAt: '2026-11-01T00:00:00.000Z',
  });
}

function apply(history: History, order: readonly StripeEvent[]): Applied {
  let transaction = pendingTransaction(history.amount);
  const entries: LedgerEntry[] = [];
  const notices: PartnerNotice[] = [];
  const processed = new Set<string>();
  for (const event of order) {
    if (processed.has(event.id)) continue; // the processed-event record
    const mapped = toProcessorEvent(event.id, event.type, event.object);
    if (mapped.kind !== 'transaction' || mapped.change === null) throw new Error(`unmapped ${event.type}`);
    const change: PaymentChange = mapped.change;
    const update = planPaymentUpdate(transaction, change, succeedsWith(transaction, change) ? history.fees : null, '2026-11-02T00:00:00.000Z');
    if (update === undefined) continue;
    processed.add(event.id);
    entries.push(...update.entries);
    notices.push(...update.notices);
    transaction = { ...transaction, status: update.status, fees: update.fees, reversals: update.reversals, revision: transaction.revision + 1 };
  }
  return { transaction, entries, notices };
}

// ---------------------------------------------------------------------------------------------------------
// The oracle: decisions.md §5a, computed on its own terms.

/** round_half_up(x × num / den), x, num, den ≥ 0, exact. */
const roundHalfUp = (x: number, num: number, den: number) => {
  const scaled = BigInt(x) * BigInt(num) * 2n;
  const quotient = scaled / BigInt(den);
  return Number((quotient + 1n) / 2n);
};

interface Amounts {
  gross: number;
  processorFee: number;
  platformFee: number;
  svcEarning: number;
  net: number;
}

/** "each reversed by round_half_up(X × C / A), and the net by the gross reversal minus the two fee reversals". */
function reversedAt(history: History, cumulative: number): Amounts {
  const processorFee = roundHalfUp(history.fees.processorFeeMinor, cumulative, history.amount);
  const platformFee = roundHalfUp(history.fees.platformFeeMinor, cumulative, history.amount);
  return {
    gross: cumulative,
    processorFee,
    platformFee,
    svcEarning: roundHalfUp(history.fees.svcEarningAmountMinor, cumulative, history.amount),
    net: cumulative - processorFee - platformFee,
  };
}

const minus = (a: Amounts, b: Amounts): Amounts => ({
  gross: a.gross - b.gross,
  processorFee: a.processorFee - b.processorFee,
  platformFee: a.platformFee - b.platformFee,
  svcEarning: a.svcEarning - b.svcEarning,
  net: a.net - b.net,
});
const negated = (a: Amounts): Amounts => minus({ gross: 0, processorFee: 0, platformFee: 0, svcEarning: 0, net: 0 }, a);

interface Expected {
  status: string;
  entries: Map<string, Amounts>;
}

function oracle(history: History): Expected {
  const entries = new Map<string, Amounts>();
  // "a refund entry is the reversal at the new C minus the reversal at the old C"
  let cumulative = 0;
  for (const refund of history.refunds) {
    const next = cumulative + refund;
    entries.set(`refund@${next}`, negated(minus(reversedAt(history, next), reversedAt(history, cumulative))));
    cumulative = next;
  }
  const dispute = history.dispute;
  if (dispute !== null) {
    // The dispute reverses the top of the payment (refunds take the bottom), so the two never overlap.
    const reversal = negated(minus(reversedAt(history, history.amount), reversedAt(history, history.amount - dispute.amount)));
    entries.set('chargeback', reversal);
    if (dispute.fee > 0) entries.set('dispute_fee', { gross: 0, processorFee: dispute.fee, platformFee: 0, svcEarning: 0, net: -dispute.fee });
    if (dispute.outcome === 'won') entries.set('dispute_reinstated', negated(reversal));
  }
  const status = dispute !== null ? 'chargeback' : cumulative === history.amount ? 'refunded' : 'succeeded';
  return { status, entries };
}

/** An entry in the oracle's terms: refund entries named by the cumulative level they reach. */
const oracleKey = (entry: LedgerEntry) => (entry.type === 'refund' ? `refund@${Number(entry.key.split('#')[1])}` : entry.type);
const amountsOf = (entry: LedgerEntry): Amounts => ({
  gross: entry.grossMinor,
  processorFee: entry.processorFeeMinor,
  platformFee: entry.platformFeeMinor,
  svcEarning: entry.svcEarningMinor,
  net: entry.netMinor,
});

function assertMatchesOracle(history: History, applied: Applied) {
  const expected = oracle(history);
  expect(applied.transaction.status).toBe(expected.status);
  // No entry applied twice: every key once.
  const keys = applied.entries.map((entry) => entry.key);
  expect(new Set(keys).size).toBe(keys.length);
  expect(new Map(applied.entries.map((entry) => [oracleKey(entry), amountsOf(entry)]))).toEqual(expected.entries);
  for (const entry of applied.entries) {
    expect(entry.grossMinor).toBe(entry.processorFeeMinor + entry.platformFeeMinor + entry.netMinor);
  }
  // What the merchant is owed for this payment: its net, less what was reversed and charged, plus what was won back.
  const refunded = history.refunds.reduce((sum, refund) => sum + refund, 0);
  const disputeNet = history.dispute === null ? 0 : -(expected.entries.get('chargeback') as Amounts).net;
  const owed =
    history.fees.netAmountMinor -
    reversedAt(history, refunded).net -
    (history.dispute?.outcome === 'won' ? 0 : disputeNet) -
    (history.dispute?.fee ?? 0);
  expect(history.fees.netAmountMinor + applied.entries.reduce((sum, entry) => sum + entry.netMinor, 0)).toBe(owed);
}

// ---------------------------------------------------------------------------------------------------------
// Generators.

const anyHistory: fc.Arbitrary<History> = fc
  .record({
    amount: fc.oneof(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: 99_999_999 })),
    processorShare: fc.double({ min: 0, max: 0.2, noNaN: true }),
    platformShare: fc.double({ min: 0, max: 0.3, noNaN: true }),
    svcShare: fc.double({ min: 0, max: 1, noNaN: true }),
    failedFirst: fc.boolean(),
    refundCuts: fc.array(fc.double({ min: 0.01, max: 1, noNaN: true }), { maxLength: 4 }),
    refundAll: fc.boolean(),
    dispute: fc.option(fc.record({ share: fc.double({ min: 0.01, max: 1, noNaN: true }), fee: fc.integer({ min: 0, max: 2_500 }), outcome: fc.constantFrom('open', 'won', 'lost') }), { nil: null }),
  })
  .map((raw): History => {
    const amount = raw.amount;
    const processorFeeMinor = Math.floor(amount * raw.processorShare);
    const platformFeeMinor = Math.min(Math.floor(amount * raw.platformShare), amount - processorFeeMinor);
    const fees: FeeBreakdown = {
      processorFeePercent: 2.9,
      partnerFeePercent: 3,
      partnerPayoutPercent: 1,
      svcEarningPercent: 2,
      processorFeeMinor,
      platformFeeMinor,
      svcEarningAmountMinor: Math.floor(platformFeeMinor * raw.svcShare),
      netAmountMinor: amount - processorFeeMinor - platformFeeMinor,
    };
    // Refunds: positive steps; with refundAll the last one takes what remains (a full refund).
    const refunds: number[] = [];
    let left = amount;
    for (const cut of raw.refundCuts) {
      const step = Math.max(1, Math.floor(left * cut * 0.5));
      if (step > left) break;
      refunds.push(step);
      left -= step;
    }
    if (raw.refundAll && left > 0) {
      refunds.push(left);
      left = 0;
    }
    // A dispute is usually for at most what was not refunded; a cardholder may also dispute a charge refunded in
    // full, for its whole amount (the money is then taken twice until the dispute is won).
    const disputed = left === 0 ? amount : Math.max(1, Math.floor(left * (raw.dispute?.share ?? 1)));
    const dispute = raw.dispute === null ? null : { amount: disputed, fee: raw.dispute.fee, outcome: raw.dispute.outcome as 'open' | 'won' | 'lost' };
    return { amount, fees, failedFirst: raw.failedFirst, refunds, dispute };
  });

/** The events in some order, some delivered more than once. */
const anyDelivery = (history: History) => {
  const events = eventsOf(history);
  return fc
    .array(fc.nat(events.length - 1), { maxLength: 4 })
    .chain((duplicates) => {
      const delivered = [...events, ...duplicates.map((i) => events[i] as StripeEvent)];
      return fc.shuffledSubarray(delivered, { minLength: delivered.length, maxLength: delivered.length });
    });
};

function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]));
}

const usd100: FeeBreakdown = {
  processorFeePercent: 2.9,
  partnerFeePercent: 1.5,
  partnerPayoutPercent: 0.5,
  svcEarningPercent: 1,
  processorFeeMinor: 290,
  platformFeeMinor: 150,
  svcEarningAmountMinor: 100,
  netAmountMinor: 9_560,
};

// ---------------------------------------------------------------------------------------------------------

describe('the ledger under any order of a payment`s events (decisions.md §5a)', () => {
  it('the 100.00 USD payment refunded 40.00: the refund entry reverses 40 % of each term, and the merchant keeps 57.36', () => {
    // Arrange
    const history: History = { amount: 10_000, fees: usd100, failedFirst: false, refunds: [4_000], dispute: null };

    // Act
    const applied = apply(history, eventsOf(history));

    // Assert: 290 × 0.4 = 116, 150 × 0.4 = 60, 100 × 0.4 = 40; net −(4000 − 116 − 60) = −3824
    expect(applied.transaction.status).toBe('succeeded');
    expect(applied.entries.map(amountsOf)).toEqual([{ gross: -4_000, processorFee: -116, platformFee: -60, svcEarning: -40, net: -3_824 }]);
    expect(usd100.netAmountMinor + applied.entries[0]!.netMinor).toBe(5_736);
    expect(applied.notices.map((notice) => notice.event)).toEqual(['transaction_succeeded', 'transaction_partially_refunded']);
    expect(applied.notices[1]).toMatchObject({ status: 'succeeded', refundedMinor: 4_000 });
  });

  it('partial steps that end in a full refund reverse the payment exactly, to the unit, whatever the rounding of each step', () => {
    // Arrange: three thirds of an amount whose fees do not divide evenly
    const fees = { ...usd100, processorFeeMinor: 31, platformFeeMinor: 17, svcEarningAmountMinor: 11, netAmountMinor: 52 };
    const history: History = { amount: 100, fees, failedFirst: false, refunds: [33, 33, 34], dispute: null };

    // Act
    const applied = apply(history, eventsOf(history));

    // Assert
    const sum = (field: keyof Amounts) => applied.entries.reduce((total, entry) => total + amountsOf(entry)[field], 0);
    expect([sum('gross'), sum('processorFee'), sum('platformFee'), sum('svcEarning'), sum('net')]).toEqual([-100, -31, -17, -11, -52]);
    expect(applied.transaction.status).toBe('refunded');
  });

  it('a partial refund and a dispute of the rest reverse the payment exactly (refunds the bottom, the dispute the top)', () => {
    const fees = { ...usd100, processorFeeMinor: 5, platformFeeMinor: 5, svcEarningAmountMinor: 5, netAmountMinor: 90 };
    const history: History = { amount: 100, fees, failedFirst: false, refunds: [50], dispute: { amount: 50, fee: 0, outcome: 'lost' } };
    const applied = apply(history, eventsOf(history));
    expect(applied.entries.reduce((total, entry) => total + entry.processorFeeMinor, 0)).toBe(-5);
    expect(applied.entries.reduce((total, entry) => total + entry.netMinor, 0)).toBe(-90);
  });

  it('a dispute: its amount reversed, its fee charged to the merchant; won, the amount comes back and the fee stays', () => {
    // Arrange
    const history: History = { amount: 10_000, fees: usd100, failedFirst: false, refunds: [], dispute: { amount: 10_000, fee: 1_500, outcome: 'won' } };

    // Act
    const applied = apply(history, eventsOf(history));

    // Assert
    expect(applied.transaction.status).toBe('chargeback');
    expect(applied.transaction.reversals.disputes).toEqual([{ id: 'dp_1', amountMinor: 10_000, feeMinor: 1_500, status: 'won' }]);
    expect(applied.entries.map((entry) => [entry.type, entry.grossMinor, entry.processorFeeMinor, entry.netMinor])).toEqual([
      ['chargeback', -10_000, -290, -9_560],
      ['dispute_fee', 0, 1_500, -1_500],
      ['dispute_reinstated', 10_000, 290, 9_560],
    ]);
    expect(applied.notices.map((notice) => notice.event)).toEqual(['transaction_succeeded', 'transaction_chargeback', 'transaction_dispute_closed']);
    expect(applied.notices[2]).toMatchObject({ status: 'chargeback', disputeStatus: 'won' });
  });

  it('a refund and a dispute that arrive before the success are recorded, and take effect with the success', () => {
    // Arrange: the processor's events in reverse
    const history: History = { amount: 10_000, fees: usd100, failedFirst: false, refunds: [1_000], dispute: { amount: 2_000, fee: 1_500, outcome: 'lost' } };
    const reversed = [...eventsOf(history)].reverse();

    // Act
    const applied = apply(history, reversed);

    // Assert: nothing announced before the success; then the success and its reversals at once
    assertMatchesOracle(history, applied);
    expect(applied.notices.map((notice) => notice.event)).toEqual(['transaction_succeeded', 'transaction_chargeback', 'transaction_dispute_closed']);
  });

  it('every permutation of small histories ends in the same status and entries', () => {
    const histories: History[] = [
      { amount: 10_000, fees: usd100, failedFirst: true, refunds: [4_000, 6_000], dispute: null },
      { amount: 10_000, fees: usd100, failedFirst: false, refunds: [1_234, 2_000], dispute: { amount: 3_000, fee: 1_500, outcome: 'won' } },
      { amount: 10_000, fees: usd100, failedFirst: true, refunds: [2_500], dispute: { amount: 7_500, fee: 0, outcome: 'lost' } },
      // A cardholder disputes a charge refunded in full: the money is taken twice (until the dispute is won).
      { amount: 10_000, fees: usd100, failedFirst: false, refunds: [4_000, 6_000], dispute: { amount: 10_000, fee: 1_500, outcome: 'won' } },
    ];
    for (const history of histories) {
      // Every event once, and the last one twice (a redelivery): 5! to 6! orders.
      const events = eventsOf(history);
      const orders = permutations([...events, events.at(-1) as StripeEvent]);
      expect(orders.length).toBeGreaterThanOrEqual(120);
      for (const order of orders) assertMatchesOracle(history, apply(history, order));
    }
  });

  it('random histories, each delivered in a random order with duplicates, match the oracle', () => {
    fc.assert(
      fc.property(
        anyHistory.chain((history) => fc.tuple(fc.constant(history), anyDelivery(history))),
        ([history, order]) => {
          assertMatchesOracle(history, apply(history, order));
        },
      ),
      { seed: SEED, numRuns: 2_000 },
    );
  });

  it('announces each outcome once, whatever the order: one success, at most one refunded, one chargeback per dispute, one dispute_closed per closed dispute', () => {
    fc.assert(
      fc.property(
        anyHistory.chain((history) => fc.tuple(fc.constant(history), anyDelivery(history))),
        ([history, order]) => {
          const count = (event: string) => apply(history, order).notices.filter((notice) => notice.event === event).length;
          expect(count('transaction_succeeded')).toBe(1);
          // A refund in full is announced at most once; a dispute once, even after a refund in full was announced.
          expect(count('transaction_refunded')).toBeLessThanOrEqual(1);
          expect(count('transaction_chargeback')).toBe(history.dispute === null ? 0 : 1);
          expect(count('transaction_dispute_closed')).toBe(history.dispute !== null && history.dispute.outcome !== 'open' ? 1 : 0);
        },
      ),
      { seed: SEED + 1, numRuns: 500 },
    );
  });

  it('writes nothing for a refund level already recorded, a dispute already known, or a stale dispute status', () => {
    const history: History = { amount: 10_000, fees: usd100, failedFirst: false, refunds: [3_000, 3_000], dispute: { amount: 4_000, fee: 0, outcome: 'won' } };
    const events = eventsOf(history);
    const applied = apply(history, events);
    // Every event again, with new ids (a resend): nothing new
    const again = events.map((event) => ({ ...event, id: `${event.id}_again` }));
    const transaction = applied.transaction;
    for (const event of again) {
      const mapped = toProcessorEvent(event.id, event.type, event.object);
      if (mapped.kind !== 'transaction' || mapped.change === null) throw new Error('unmapped');
      expect(planPaymentUpdate(transaction, mapped.change, null, '2026-11-03T00:00:00.000Z')).toBeUndefined();
    }
  });
});
