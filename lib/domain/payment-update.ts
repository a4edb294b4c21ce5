/**
 * What one processor event does to a payment (decisions.md §5, §5a): its status, its split (on success), the
 * reversal facts, the new ledger entries and the partner events, decided together so that the store writes them
 * in one transaction. Pure.
 *
 * A refund or dispute that arrives before the payment's success is recorded in the facts and moves nothing yet;
 * it takes effect in the write of the success, so the final status and entries do not depend on the order.
 */
import { type FeeBreakdown, canMove, type Transaction, type TransactionStatus } from './transaction';
import { type DisputeStatus, type LedgerEntry, mergeFacts, type PaymentChange, type ReversalFacts, reversalEntries, statusWithReversals } from './ledger';
import type { PartnerEvent, PartnerNotice } from './webhooks';

export type { PartnerNotice } from './webhooks';

export interface PaymentUpdate {
  status: TransactionStatus;
  /** The split after the event: set by the success, else as it was. */
  fees: FeeBreakdown | null;
  reversals: ReversalFacts;
  /** The entries this event adds (never one that exists: entry keys are stable and the facts only grow). */
  entries: LedgerEntry[];
  notices: PartnerNotice[];
  /** The payment succeeded with this event: its sale now waits for settlement. */
  succeededNow: boolean;
}

/** Whether the event makes the payment succeed, so its split must be computed (from the payee read now). */
export const succeedsWith = (transaction: Transaction, change: PaymentChange): boolean =>
  change.kind === 'outcome' && change.status === 'succeeded' && canMove(transaction.status, 'succeeded');

const isClosed = (status: DisputeStatus) => status !== 'needs_response';

/**
 * The update an event makes, or `undefined` when it changes nothing (a duplicate, a late or out-of-order status,
 * a refund level or dispute already recorded). `fees` is the split, required when {@link succeedsWith}.
 */
export function planPaymentUpdate(transaction: Transaction, change: PaymentChange, fees: FeeBreakdown | null, now: string): PaymentUpdate | undefined {
  const before = transaction.status;
  const outcome = change.kind === 'outcome' && canMove(before, change.status) ? change.status : before;
  const succeededNow = outcome === 'succeeded' && before !== 'succeeded';
  if (succeededNow && fees === null) throw new Error(`transaction ${transaction.svcTxId}: a success needs its fee split`);
  const feesAfter = succeededNow ? fees : transaction.fees;
  const reversals = mergeFacts(transaction.reversals, change) ?? transaction.reversals;
  // Once the payment has succeeded, its status is what its reversals make of a success, whatever order they came
  // in: a dispute makes it `chargeback` even after a refund in full (the cardholder's bank took the money again).
  const status = feesAfter === null ? outcome : statusWithReversals('succeeded', transaction.amountMinor, reversals);
  if (status === before && reversals === transaction.reversals) return undefined;

  const existing = new Set(reversalEntries(transaction, transaction.fees, transaction.reversals, now).map((entry) => entry.key));
  const entries = reversalEntries(transaction, feesAfter, reversals, now).filter((entry) => !existing.has(entry.key));
  return { status, fees: feesAfter, reversals, entries, notices: noticesOf(transaction, { outcome, status, reversals, succeededNow, visible: feesAfter !== null }), succeededNow };
}

/**
 * The partner events of an update, in the order they happened at the processor: the outcome, then a refund or
 * dispute it carries. A payment's reversals are announced only once it has succeeded (before, the partner knows
 * of no money to reverse).
 */
function noticesOf(
  transaction: Transaction,
  after: { outcome: TransactionStatus; status: TransactionStatus; reversals: ReversalFacts; succeededNow: boolean; visible: boolean },
): PartnerNotice[] {
  const notices: PartnerNotice[] = [];
  if (after.outcome !== transaction.status) notices.push({ event: eventOf(after.outcome), status: after.outcome });
  if (!after.visible) return notices;
  if (after.status !== after.outcome) notices.push({ event: eventOf(after.status), status: after.status });
  const told = after.succeededNow ? undefined : transaction.reversals;
  if (after.status === 'succeeded' && after.reversals.refundedMinor > (told?.refundedMinor ?? 0)) {
    notices.push({ event: 'transaction_partially_refunded', status: 'succeeded', refundedMinor: after.reversals.refundedMinor });
  }
  for (const dispute of after.reversals.disputes) {
    const known = told?.disputes.find((previous) => previous.id === dispute.id || (previous.legacy === true && previous.id === ''));
    if (isClosed(dispute.status) && (known === undefined || !isClosed(known.status))) {
      notices.push({ event: 'transaction_dispute_closed', status: after.status, disputeStatus: dispute.status });
    }
  }
  return notices;
}

const eventOf = (status: TransactionStatus): PartnerEvent => {
  if (status === 'initialized' || status === 'pending') throw new Error(`no partner event announces ${status}`);
  return `transaction_${status}`;
};
