/**
 * The reconciliation with the processor (decisions.md §12): a transaction still waiting for the processor's word
 * (`pending`, or `initialized`, with an intent), or one that `failed` in the last 72 hours (its buyer may pay the same
 * intent again), is asked about at the processor when its next look is due, and what the intent's state says
 * (succeeded, failed, canceled) is applied through the processor event's own path (`applyPaymentEvent`), so a payment
 * is never left `pending` at the service while the processor has it `succeeded`.
 *
 * Looks back off per transaction (`lib/domain/reconciliation.ts`: 10 minutes, doubling, at most a day apart), and a
 * payment still open after `giveUpAfterMs` is given up: its intent canceled at the processor, so no late buyer pays a
 * payment the service stopped watching, and the cancellation applied (abandoned) by the same path. Each outcome
 * applied here is an event the service missed: counted (`ReconciliationFixed`) and alarmed on; the backlog
 * (`ReconciliationOldestDueAgeSeconds`, `ReconciliationBacklog`) is measured every run and alarmed on too.
 */
import { timeLeftMs } from '../deadline';
import { FAILED_WATCH_MS, nextCheckDue, type ReconciliationState, reconciliationStateOf, watchOf } from '../domain/reconciliation';
import { countMetric, logger, secondsMetric } from '../observability';
import { inPool, range } from '../pool';
import type { PaymentIntent } from './ports/processor';
import { applyPaymentEvent, type PaymentEventDeps } from './processor-events';

/** A transaction the reconciliation index lists: its sort key as listed (where it stands in its shard), and when it is due. */
export interface DueTransaction {
  svcTxId: string;
  position: string;
  dueAt: string;
}

/** The reconciliation index (`lib/store/reconciliation.ts`): fixed shards, each listing the earliest due first. */
export interface ReconciliationQueue {
  /** How many shards there are (0 … shards − 1); each is listed. */
  shards: number;
  /** Up to `limit` of `shard`'s transactions whose next look is due at or before `dueBy`, the earliest first. */
  listDue(shard: number, dueBy: string, limit: number): Promise<DueTransaction[]>;
  /**
   * Moves its next look to `dueAt` with the watch's new `state`, unless it changed since it was read (its place, or
   * its revision `revision`): `false` then.
   */
  reschedule(due: DueTransaction, revision: number, next: { dueAt: string; state: ReconciliationState }): Promise<boolean>;
  /** Takes it out of the index, unless it changed since it was read: `false` then. */
  stopWatching(due: DueTransaction, revision: number): Promise<boolean>;
}

/** What the reconciliation asks of the processor (`lib/use-cases/ports/processor.ts`). */
export interface ReconciliationProcessor {
  retrievePaymentIntent(id: string): Promise<PaymentIntent | undefined>;
  cancelPaymentIntent(id: string): Promise<PaymentIntent | undefined>;
}

export interface ReconciliationDeps {
  processor: ReconciliationProcessor;
  queue: ReconciliationQueue;
  /** Where an outcome is applied: the processor event's path and its stores. */
  paymentEvents: PaymentEventDeps;
  now: () => Date;
}

export interface ReconciliationLimits {
  /** The most transactions one run asks about; the rest wait for the next run (the earliest due first). */
  maxChecks: number;
  /** Processor calls in flight at once. */
  concurrency: number;
  /** How long a payment may wait for the processor before its intent is canceled (`RECONCILIATION_GIVE_UP_DAYS`). */
  giveUpAfterMs: number;
}

export interface ReconciliationReport {
  /** Transactions asked about at the processor. */
  checked: number;
  /** Outcomes applied: each an event the service had missed. */
  fixed: number;
  /** Given up: the intent canceled at the processor and the payment abandoned. */
  gaveUp: number;
  /**
   * Looked at, nothing applied (still open at the processor, unknown to it, or an outcome that cannot be this
   * transaction's): its next look backed off.
   */
  open: number;
  /** A failed payment's watch ended (72 hours after the failure): out of the index. */
  released: number;
  /** Moved on since they were listed (an event came first): nothing to do. */
  moved: number;
  /** Could not be checked this run (the processor or the table failed): still due for the next run. */
  failed: number;
  /** Due transactions were left for the next run (the run's limit or its time ran out, or a check failed). */
  more: boolean;
  /** Due transactions left when the run stopped: those listed and not finished (at least; `more` says a shard held more). */
  backlog: number;
  /** How long the earliest due transaction had been due when the run started (0 when none was). */
  oldestDueAgeSeconds: number;
}

type CheckResult = 'fixed' | 'gaveUp' | 'open' | 'released' | 'moved';

/** The time a run keeps in hand: it starts no check with less than this left before its deadline. */
const RUN_RESERVE_MS = 15_000;
/** Shards listed at once. */
const LIST_CONCURRENCY = 8;

const hasTimeFor = () => (timeLeftMs() ?? Number.POSITIVE_INFINITY) > RUN_RESERVE_MS;

/**
 * One run. Steps:
 *   1. list every shard's due transactions (a Query each, at most `maxChecks` from each, the earliest due first), take
 *      the `maxChecks` earliest of them all (merged by sort key), and measure the backlog's age;
 *   2. for each, while time is left: read it again (strongly consistent) and, as its watch says,
 *      - a failed payment watched for 72 hours: out of the index;
 *      - a payment waiting past `giveUpAfterMs`: its intent canceled at the processor (which answers a succeeded or
 *        processing intent as it is instead), and what the intent then says applied;
 *      - otherwise: its intent read at the processor, and an outcome it reports applied;
 *      each outcome by `applyPaymentEvent` (its own atomic write: status, split, ledger, partner webhooks). One that
 *      moves nothing (still open, unknown to the processor, an outcome that does not match) has its next look backed
 *      off (a conditional update of its sort key and check count), so it costs at most a look a day;
 *   3. count what it did, and what it left.
 * Resumable: what a run leaves (its limit, its time, a failure) is still due, the earliest first, for the next.
 * Idempotent beside the processor's own event and another run: whichever applies the outcome first moves the
 * transaction once; the other finds nothing new and writes nothing.
 */
export async function runReconciliation(deps: ReconciliationDeps, limits: ReconciliationLimits): Promise<ReconciliationReport> {
  const startedAt = deps.now();
  const listed = await inPool(range(deps.queue.shards), LIST_CONCURRENCY, (shard) => deps.queue.listDue(shard, startedAt.toISOString(), limits.maxChecks));
  const due = oldestDue(listed, limits.maxChecks);
  const earliest = due.items[0];
  const report: ReconciliationReport = {
    checked: 0, fixed: 0, gaveUp: 0, open: 0, released: 0, moved: 0, failed: 0, more: due.more,
    backlog: listed.reduce((sum, list) => sum + list.length, 0),
    oldestDueAgeSeconds: earliest === undefined ? 0 : Math.max(0, Math.floor((startedAt.getTime() - Date.parse(earliest.dueAt)) / 1000)),
  };
  await inPool(due.items, limits.concurrency, async (item) => {
    if (!hasTimeFor()) {
      report.more = true;
      return;
    }
    const result = await checkOne(deps, limits, item).catch((error: unknown) => {
      logger.error('Reconciliation could not check a transaction; the next run tries again', { svc_tx_id: item.svcTxId, error });
      return 'failed' as const;
    });
    if (result === 'failed') report.more = true;
    else report.backlog--;
    if (result !== 'moved' && result !== 'failed' && result !== 'released') report.checked++;
    report[result]++;
  });
  countMetric('ReconciliationChecked', report.checked);
  countMetric('ReconciliationFixed', report.fixed);
  countMetric('ReconciliationGaveUp', report.gaveUp);
  countMetric('ReconciliationBacklog', report.backlog);
  secondsMetric('ReconciliationOldestDueAgeSeconds', report.oldestDueAgeSeconds);
  if (report.failed > 0) countMetric('ReconciliationFailures', report.failed);
  logger.info('Reconciliation run', { ...report });
  return report;
}

/** What checking one listed transaction came to. */
async function checkOne(deps: ReconciliationDeps, limits: ReconciliationLimits, due: DueTransaction): Promise<CheckResult> {
  const transaction = await deps.paymentEvents.transactions.getTransaction(due.svcTxId);
  const watch = transaction === undefined ? undefined : watchOf(transaction);
  if (transaction === undefined || watch === undefined || transaction.processorPaymentIntentId === null) return 'moved';
  const state = reconciliationStateOf(transaction);
  const now = deps.now();
  const watchedMs = now.getTime() - Date.parse(state.since);
  if (watch === 'failed' && watchedMs >= FAILED_WATCH_MS) {
    return (await deps.queue.stopWatching(due, transaction.revision)) ? 'released' : 'moved';
  }
  const givingUp = watch === 'waiting' && watchedMs >= limits.giveUpAfterMs;
  const intentId = transaction.processorPaymentIntentId;
  const intent = await (givingUp ? deps.processor.cancelPaymentIntent(intentId) : deps.processor.retrievePaymentIntent(intentId));
  if (intent === undefined) {
    logger.error('Reconciliation: the processor does not know the intent of a watched transaction', { svc_tx_id: transaction.svcTxId, status: transaction.status });
    countMetric('ReconciliationIntentsMissing');
  }
  const event = intent?.outcomeEvent;
  if (event !== undefined) {
    // A logger of this check's own: the run's checks go at once, and the event path sets its keys on its logger.
    const applied = await applyPaymentEvent({ ...deps.paymentEvents, log: logger.createChild() }, event, transaction);
    if (applied.moved) {
      if (givingUp && applied.status === 'abandoned') {
        logger.warn('Reconciliation gave up on a payment: its intent canceled at the processor', { svc_tx_id: transaction.svcTxId, since: state.since });
        return 'gaveUp';
      }
      logger.warn('Reconciliation applied an outcome whose processor event the service had not received', { svc_tx_id: transaction.svcTxId, status: applied.status, event_type: event.type });
      return 'fixed';
    }
    // Its event came first (then the reschedule below finds it changed and writes nothing), the outcome is one the
    // transaction has already had (a failed payment's decline), or it cannot be this transaction's (logged and
    // counted by the event path): looked at again later, backed off.
  }
  const checks = state.checks + 1;
  const rescheduled = await deps.queue.reschedule(due, transaction.revision, { dueAt: nextCheckDue(now.toISOString(), checks), state: { since: state.since, checks } });
  return rescheduled ? 'open' : 'moved';
}

/** The `max` earliest due of every shard's due transactions (each shard's list earliest first), and whether any were left. */
export function oldestDue(perShard: readonly DueTransaction[][], max: number): { items: DueTransaction[]; more: boolean } {
  const all = perShard.flat().sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0));
  // A shard that filled its list may hold more than it listed.
  const more = all.length > max || perShard.some((list) => list.length >= max);
  return { items: all.slice(0, max), more };
}
