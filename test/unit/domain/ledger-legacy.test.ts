/**
 * Data written before the ledger (decisions.md §5a came later): a transaction refunded or charged back then has no
 * `reversals` (it was reversed whole, by an `ADJUSTMENT#…` item or by leaving settlement unpaid), and that adjustment
 * item must read as the entry it was. Neither may be reversed a second time by an event that arrives now.
 */
import { describe, expect, it } from '@jest/globals';
import { legacyFacts } from '../../../lib/domain/ledger';
import { currencyCode } from '../../../lib/domain/money';
import { planPaymentUpdate } from '../../../lib/domain/payment-update';
import type { Transaction } from '../../../lib/domain/transaction';
import { toEntry } from '../../../lib/store/ledger-entries';

const fees = {
  processorFeePercent: 2.9,
  partnerFeePercent: 1.5,
  partnerPayoutPercent: 0,
  svcEarningPercent: 1.5,
  processorFeeMinor: 290,
  platformFeeMinor: 150,
  svcEarningAmountMinor: 150,
  netAmountMinor: 9_560,
};

/** A transaction as read from an item written before the ledger (the store fills `reversals` with `legacyFacts`). */
const legacy = (status: 'refunded' | 'chargeback'): Transaction => ({
  id: 'txn_1',
  svcTxId: 'svc_tx_legacy',
  partnerId: 'ptr_1',
  partnerName: 'Partner',
  clientId: 'merchant-1',
  clientName: 'Merchant',
  partnerReference: 'order-1',
  processorPaymentIntentId: 'pi_legacy0000000001',
  amountMinor: 10_000,
  currency: currencyCode('USD'),
  status,
  settlementStatus: 'paid',
  fees,
  reversals: legacyFacts(status, 10_000),
  revision: 0,
  receiptEmail: null,
  statementDescriptorSuffix: null,
  meta: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-02T00:00:00.000Z',
});

const NOW = '2026-11-27T00:00:00.000Z';

describe('transactions reversed before the ledger', () => {
  it('a refunded one: the charge.refunded event sent again (cumulative = the amount) writes nothing', () => {
    const update = planPaymentUpdate(legacy('refunded'), { kind: 'refunds', chargeId: 'ch_1', refundedMinor: 10_000, refunds: undefined }, null, NOW);
    expect(update).toBeUndefined();
  });

  it('a charged-back one: its dispute, seen now by its id, is the one it had (no second chargeback entry)', () => {
    const update = planPaymentUpdate(legacy('chargeback'), { kind: 'dispute', dispute: { id: 'dp_1', amountMinor: 10_000, feeMinor: null, status: 'needs_response' } }, null, NOW);
    // The dispute's id is recorded, and nothing else happens.
    expect(update?.entries).toEqual([]);
    expect(update?.notices).toEqual([]);
    expect(update?.reversals.disputes).toEqual([{ id: 'dp_1', amountMinor: 10_000, feeMinor: null, status: 'needs_response', legacy: true }]);
  });

  it('a charged-back one whose dispute is won now: reinstated by exactly the whole payment the old adjustment reversed', () => {
    const update = planPaymentUpdate(legacy('chargeback'), { kind: 'dispute', dispute: { id: 'dp_1', amountMinor: 10_000, feeMinor: null, status: 'won' } }, null, NOW);
    expect(update?.entries.map((entry) => [entry.type, entry.grossMinor, entry.processorFeeMinor, entry.platformFeeMinor, entry.netMinor])).toEqual([
      ['dispute_reinstated', 10_000, 290, 150, 9_560],
    ]);
    expect(update?.notices.map((notice) => notice.event)).toEqual(['transaction_dispute_closed']);
  });

  it('a charged-back one whose dispute is lost now: nothing more is taken', () => {
    const update = planPaymentUpdate(legacy('chargeback'), { kind: 'dispute', dispute: { id: 'dp_1', amountMinor: 10_000, feeMinor: null, status: 'lost' } }, null, NOW);
    expect(update?.entries).toEqual([]);
  });
});

describe('an adjustment item written before the ledger', () => {
  it('reads as the refund entry it was: eligible at once (its payment was settled), its amounts as stored', () => {
    const entry = toEntry({
      entity: 'settlementAdjustment',
      svcTxId: 'svc_tx_legacy',
      partnerId: 'ptr_1',
      clientId: 'merchant-1',
      partnerReference: 'order-1',
      currency: 'USD',
      kind: 'refund',
      grossMinor: -10_000,
      processorFeeMinor: -290,
      platformFeeMinor: -150,
      netAmountMinor: -9_560,
      createdAt: '2026-01-05T00:00:00.000Z',
      settlementStatus: 'unsettled',
    });
    expect(entry).toMatchObject({ type: 'refund', key: 'adjustment#refund', txCreatedAt: '2026-01-05T00:00:00.000Z', grossMinor: -10_000, netMinor: -9_560 });
  });
});
