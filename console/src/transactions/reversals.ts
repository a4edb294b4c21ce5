/**
 * What happened to a payment's money after the sale (decisions.md §5a), as the transaction resource says it:
 * `refundedAmount` (cumulative), `disputedAmount` and `disputeStatus` (null without a dispute).
 */
import type { Transaction } from '../api-types';
import { money } from '../format';

export const wasRefunded = (transaction: Transaction) => transaction.refundedAmount > 0;
export const wasDisputed = (transaction: Transaction) => transaction.disputeStatus !== null || transaction.disputedAmount > 0;

/** The list's compact marks: "refunded $15.00", "disputed $30.00 (needs_response)"; none for an untouched payment. */
export function reversalMarks(transaction: Transaction): string[] {
  const marks: string[] = [];
  if (wasRefunded(transaction)) marks.push(`refunded ${money(transaction.refundedAmount, transaction.currency)}`);
  if (wasDisputed(transaction)) {
    const status = transaction.disputeStatus === null ? '' : ` (${transaction.disputeStatus})`;
    marks.push(`disputed ${money(transaction.disputedAmount, transaction.currency)}${status}`);
  }
  return marks;
}
