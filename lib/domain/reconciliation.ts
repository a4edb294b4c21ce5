/**
 * When the reconciliation with the processor looks at a transaction (decisions.md §12), and for how long. Pure.
 *
 * A transaction is watched while the processor alone can tell its outcome: `pending` (or `initialized`) with an
 * intent, and for {@link FAILED_WATCH_MS} after it `failed` (the buyer may pay the same intent again: failed →
 * succeeded). Each look backs off: the next is due min(10 min × 2^checks, 24 h) after the last (the first 10 minutes
 * after the watch began), so the index's order, by next due time, puts a new transaction's first look before a
 * long-open one's umpteenth, and an intent the processor holds open for days costs a look a day.
 */
import { awaitsProcessor, type ReconciliationState, type Transaction } from './transaction';

/** The first look, 10 minutes after the watch began; each later interval doubles. */
export const FIRST_CHECK_MS = 10 * 60_000;
/** The longest interval between two looks. */
export const MAX_CHECK_INTERVAL_MS = 24 * 60 * 60_000;
/** How long a failed payment is watched for a retry's success whose event the service might miss. */
export const FAILED_WATCH_MS = 72 * 60 * 60_000;

export type { ReconciliationState } from './transaction';

/** `waiting`: its outcome is the processor's; `failed`: watched for a retry's success; `undefined`: not watched. */
export type Watch = 'waiting' | 'failed';

export function watchOf(transaction: Pick<Transaction, 'status' | 'processorPaymentIntentId'>): Watch | undefined {
  if (awaitsProcessor(transaction)) return 'waiting';
  return transaction.status === 'failed' && transaction.processorPaymentIntentId !== null ? 'failed' : undefined;
}

/** When the look after `checks` looks is due, `from` the last one (or the watch's start). */
export function nextCheckDue(from: string, checks: number): string {
  const interval = Math.min(FIRST_CHECK_MS * 2 ** Math.min(checks, 32), MAX_CHECK_INTERVAL_MS);
  return new Date(Date.parse(from) + interval).toISOString();
}

/** A watch starting `now`: its state, and when its first look is due. */
export const startWatch = (now: string): { state: ReconciliationState; dueAt: string } => ({ state: { since: now, checks: 0 }, dueAt: nextCheckDue(now, 0) });

/** A transaction's state, or for one written before the state was kept, a watch that began at its last change. */
export const reconciliationStateOf = (transaction: Pick<Transaction, 'reconciliation' | 'updatedAt'>): ReconciliationState =>
  transaction.reconciliation ?? { since: transaction.updatedAt, checks: 0 };
