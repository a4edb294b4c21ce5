/**
 * The reconciliation with the processor (decisions.md §12): a transaction still waiting for the processor's word
 * (`pending`, or `initialized`, with an intent) some minutes after its last change is asked about at the processor,
 * and what the intent's state says (succeeded, failed, canceled) is applied through the processor event's own path
 * (`applyPaymentEvent`), so a payment is never left `pending` at the service while the processor has it `succeeded`.
 * Each outcome applied here is an event the service missed: counted (`ReconciliationFixed`) and alarmed on.
 */
import { timeLeftMs } from '../deadline';
import { awaitsProcessor } from '../domain/transaction';
import { countMetric, logger } from '../observability';
import type { PaymentIntent } from '../processor/port';
import { applyPaymentEvent, type PaymentEventDeps } from './processor-events';

/** A transaction the reconciliation index lists, with its sort key as listed (where it stands in its shard). */
export interface DueTransaction {
  svcTxId: string;
  position: string;
}

/** The reconciliation index (`lib/store/reconciliation.ts`): fixed shards, each oldest first. */
export interface ReconciliationQueue {
  /** How many shards there are (0 … shards − 1); each is listed. */
  shards: number;
  /** Up to `limit` of `shard`'s transactions whose last change (or look) was at or before `dueBefore`, oldest first. */
  listDue(shard: number, dueBefore: string, limit: number): Promise<DueTransaction[]>;
  /** Sends it to the back of its shard as of `checkedAt`, unless it changed since listed: `false` then. */
  markChecked(due: DueTransaction, checkedAt: string): Promise<boolean>;
}

export interface ReconciliationDeps {
  processor: { retrievePaymentIntent(id: string): Promise<PaymentIntent | undefined> };
  queue: ReconciliationQueue;
  /** Where an outcome is applied: the processor event's path and its stores. */
  paymentEvents: PaymentEventDeps;
  now: () => Date;
}

export interface ReconciliationLimits {
  /** How long after its last change a transaction is asked about (events normally arrive within seconds). */
  minAgeMs: number;
  /** The most transactions one run asks about; the rest wait for the next run (oldest first). */
  maxChecks: number;
  /** Processor calls in flight at once. */
  concurrency: number;
}

export interface ReconciliationReport {
  /** Transactions asked about at the processor. */
  checked: number;
  /** Outcomes applied: each an event the service had missed. */
  fixed: number;
  /** Still open at the processor (or unknown to it): looked at, sent to the back of the queue. */
  open: number;
  /** Moved on since they were listed (an event came first): nothing to do. */
  moved: number;
  /** Could not be checked this run (the processor or the table failed): tried again next run. */
  failed: number;
  /** Due transactions were left for the next run (the run's limit or its time ran out). */
  more: boolean;
}

/** The time a run keeps in hand: it starts no check with less than this left before its deadline. */
const RUN_RESERVE_MS = 15_000;
/** Shards listed at once. */
const LIST_CONCURRENCY = 8;

const hasTimeFor = () => (timeLeftMs() ?? Number.POSITIVE_INFINITY) > RUN_RESERVE_MS;

/**
 * One run. Steps:
 *   1. list every shard's due transactions (a Query each, at most `maxChecks` from each, oldest first) and take the
 *      `maxChecks` oldest of them all (merged by sort key);
 *   2. for each, while time is left: read it again (strongly consistent); if it still waits, read its intent at the
 *      processor; an outcome is applied by `applyPaymentEvent` (its own atomic write: status, split, ledger, partner
 *      webhooks), an open intent is sent to the back of its shard (a conditional update of its sort key), so one the
 *      processor legitimately holds open never keeps the others from their turn;
 *   3. count what it did.
 * Resumable: what a run leaves (its limit, its time, a failure) is still due, oldest first, for the next. Idempotent
 * beside the processor's own event and another run: whichever applies the outcome first moves the transaction once;
 * the other finds nothing new and writes nothing.
 */
export async function runReconciliation(deps: ReconciliationDeps, limits: ReconciliationLimits): Promise<ReconciliationReport> {
  const dueBefore = new Date(deps.now().getTime() - limits.minAgeMs).toISOString();
  const listed = await inPool(range(deps.queue.shards), LIST_CONCURRENCY, (shard) => deps.queue.listDue(shard, dueBefore, limits.maxChecks));
  const due = oldestDue(listed, limits.maxChecks);
  const report: ReconciliationReport = { checked: 0, fixed: 0, open: 0, moved: 0, failed: 0, more: due.more };
  await inPool(due.items, limits.concurrency, async (item) => {
    if (!hasTimeFor()) {
      report.more = true;
      return;
    }
    const result = await checkOne(deps, item).catch((error: unknown) => {
      logger.error('Reconciliation could not check a transaction; the next run tries again', { svc_tx_id: item.svcTxId, error });
      return 'failed' as const;
    });
    if (result !== 'moved' && result !== 'failed') report.checked++;
    report[result]++;
  });
  countMetric('ReconciliationChecked', report.checked);
  countMetric('ReconciliationFixed', report.fixed);
  if (report.failed > 0) countMetric('ReconciliationFailures', report.failed);
  logger.info('Reconciliation run', { ...report });
  return report;
}

/** What checking one listed transaction came to. */
async function checkOne(deps: ReconciliationDeps, due: DueTransaction): Promise<'fixed' | 'open' | 'moved'> {
  const transaction = await deps.paymentEvents.transactions.getTransaction(due.svcTxId);
  if (transaction === undefined || !awaitsProcessor(transaction) || transaction.processorPaymentIntentId === null) return 'moved';
  const intent = await deps.processor.retrievePaymentIntent(transaction.processorPaymentIntentId);
  if (intent === undefined) {
    logger.error('Reconciliation: the processor does not know the intent of a waiting transaction', { svc_tx_id: transaction.svcTxId });
    countMetric('ReconciliationIntentsMissing');
  }
  const event = intent?.outcomeEvent;
  if (event !== undefined) {
    const applied = await applyPaymentEvent(deps.paymentEvents, event, transaction);
    if (applied.moved) {
      logger.warn('Reconciliation applied an outcome whose processor event the service had not received', { svc_tx_id: transaction.svcTxId, status: applied.status, event_type: event.type });
      return 'fixed';
    }
    // Its event came first (then its keys are gone and this changes nothing), or the outcome cannot be this
    // transaction's (logged and counted by the event path): either way, not the oldest any more.
  }
  await deps.queue.markChecked(due, deps.now().toISOString());
  return event === undefined ? 'open' : 'moved';
}

/** The `max` oldest of every shard's due transactions (each shard's list oldest first), and whether any were left. */
export function oldestDue(perShard: readonly DueTransaction[][], max: number): { items: DueTransaction[]; more: boolean } {
  const all = perShard.flat().sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0));
  // A shard that filled its list may hold more than it listed.
  const more = all.length > max || perShard.some((list) => list.length >= max);
  return { items: all.slice(0, max), more };
}

const range = (count: number) => Array.from({ length: count }, (_, i) => i);

/** `work` over `items`, at most `concurrency` at once; the results in the items' order. */
async function inPool<T, R>(items: readonly T[], concurrency: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i] as T);
    }
  };
  await Promise.all(range(Math.min(Math.max(1, concurrency), items.length)).map(worker));
  return results;
}
