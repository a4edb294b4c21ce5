/** The transaction state machine (decisions.md §5). The ledger entries of a move are tested in ledger.test.ts. */
import { describe, expect, it } from '@jest/globals';
import { canMove, TRANSACTION_STATUSES, type TransactionStatus } from '../../../lib/domain/transaction';

/** Every allowed move, written out by hand from decisions.md §5: the oracle. */
const ALLOWED = new Set(['pending>succeeded', 'pending>failed', 'pending>abandoned', 'failed>succeeded', 'succeeded>refunded', 'succeeded>chargeback']);

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
