/** The transaction state machine (decisions.md §5) and the settlement bookkeeping of a move. */
import { describe, expect, it } from '@jest/globals';
import { currencyCode } from '../../lib/domain/money';
import { canMove, settlementEffectOf, TRANSACTION_STATUSES, type Transaction, type TransactionStatus } from '../../lib/domain/transaction';

/** Every allowed move, written out by hand from decisions.md §5: the oracle. */
const ALLOWED = new Set(['pending>succeeded', 'pending>failed', 'pending>abandoned', 'failed>succeeded', 'succeeded>refunded', 'succeeded>chargeback']);

const transaction = (overrides: Partial<Transaction> = {}): Transaction => ({
  id: 'txn_1',
  svcTxId: 'svc_tx_1',
  partnerId: 'ptr_1',
  partnerName: 'Partner',
  clientId: 'merchant-1',
  clientName: 'Merchant',
  partnerReference: 'order-1',
  processorPaymentIntentId: 'pi_1',
  amountMinor: 10_000,
  currency: currencyCode('EUR'),
  status: 'succeeded',
  settlementStatus: 'unsettled',
  fees: {
    processorFeePercent: 2.9,
    partnerFeePercent: 3,
    partnerPayoutPercent: 1.5,
    svcEarningPercent: 1.5,
    processorFeeMinor: 290,
    platformFeeMinor: 300,
    svcEarningAmountMinor: 150,
    netAmountMinor: 9_410,
  },
  receiptEmail: null,
  statementDescriptorSuffix: null,
  meta: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  ...overrides,
});

describe('canMove', () => {
  it.each(TRANSACTION_STATUSES.flatMap((from) => TRANSACTION_STATUSES.map((to) => [from, to] as [TransactionStatus, TransactionStatus])))(
    '%s -> %s',
    (from, to) => {
      expect(canMove(from, to)).toBe(ALLOWED.has(`${from}>${to}`));
    },
  );

  it('allows a retried payment (failed -> succeeded) but nothing out of a refund, a chargeback or an abandonment', () => {
    expect(canMove('failed', 'succeeded')).toBe(true);
    for (const from of ['refunded', 'chargeback', 'abandoned'] as const) {
      expect(TRANSACTION_STATUSES.filter((to) => canMove(from, to))).toEqual([]);
    }
  });
});

describe('settlementEffectOf', () => {
  const now = '2026-02-01T10:00:00.000Z';

  it('puts a payment that succeeded in the settlement index, and leaves failures out of it', () => {
    expect(settlementEffectOf(transaction({ status: 'pending', fees: null }), 'succeeded', now)).toEqual({ kind: 'index' });
    expect(settlementEffectOf(transaction({ status: 'pending', fees: null }), 'failed', now)).toEqual({ kind: 'none' });
    expect(settlementEffectOf(transaction({ status: 'pending', fees: null }), 'abandoned', now)).toEqual({ kind: 'none' });
  });

  it('takes an unsettled transaction that is refunded or charged back out of the index, with no adjustment', () => {
    expect(settlementEffectOf(transaction(), 'refunded', now)).toEqual({ kind: 'unindex' });
    expect(settlementEffectOf(transaction(), 'chargeback', now)).toEqual({ kind: 'unindex' });
  });

  it.each(['queued', 'paid'] as const)('reverses a %s transaction with a negative adjustment that keeps the split exact', (settlementStatus) => {
    // Act
    const refund = settlementEffectOf(transaction({ settlementStatus }), 'refunded', now);
    const chargeback = settlementEffectOf(transaction({ settlementStatus }), 'chargeback', now);

    // Assert
    expect(refund).toEqual({
      kind: 'adjust',
      adjustment: {
        svcTxId: 'svc_tx_1',
        partnerId: 'ptr_1',
        clientId: 'merchant-1',
        partnerReference: 'order-1',
        currency: 'EUR',
        kind: 'refund',
        grossMinor: -10_000,
        processorFeeMinor: -290,
        platformFeeMinor: -300,
        netAmountMinor: -9_410,
        createdAt: now,
      },
    });
    expect(chargeback.kind === 'adjust' && chargeback.adjustment.kind).toBe('chargeback');
    if (refund.kind !== 'adjust') throw new Error('expected an adjustment');
    const { grossMinor, processorFeeMinor, platformFeeMinor, netAmountMinor } = refund.adjustment;
    expect(processorFeeMinor + platformFeeMinor + netAmountMinor).toBe(grossMinor);
  });

  it('writes a zero fee of a reversal as 0, never -0', () => {
    const free = transaction({
      settlementStatus: 'paid',
      fees: { processorFeePercent: 0, partnerFeePercent: 0, partnerPayoutPercent: 0, svcEarningPercent: 0, processorFeeMinor: 0, platformFeeMinor: 0, svcEarningAmountMinor: 0, netAmountMinor: 10_000 },
    });

    const effect = settlementEffectOf(free, 'refunded', now);

    expect(effect.kind === 'adjust' && Object.is(effect.adjustment.processorFeeMinor, 0)).toBe(true);
    expect(effect.kind === 'adjust' && Object.is(effect.adjustment.platformFeeMinor, 0)).toBe(true);
  });
});
