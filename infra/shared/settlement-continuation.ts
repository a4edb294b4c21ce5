/**
 * The settlement continuation queue's settings (docs/settlement.md: a run that cannot finish in its function's time
 * goes on by itself), shared by the CDK stacks and the local runtime. Pure data: no CDK, no I/O.
 *
 * A run that stops for time (or for the size of its answer, or because it read only part of a partner's backlog)
 * sends one message: its scope and its cutoff. The consumer (`functions/settlement-continuation.ts`) runs it with its
 * own 15 minutes and sends another while it makes progress. A message the consumer could not process (it threw: the
 * table down) is received again after the visibility timeout; after `maxReceiveCount` it goes to the dead-letter
 * queue (alarmed), and the next scheduled run settles what is left.
 */
import { SETTLEMENT_RUN_TIMEOUT_SECONDS } from '../../lib/routes';

export const SETTLEMENT_CONTINUATIONS = {
  /** The queue's name locally (its URL ends in `/<account>/<name>`, as SQS's do). */
  name: 'settlement-continuations',
  /** The consumer's timeout: a whole scheduled run's. */
  consumerTimeoutSeconds: SETTLEMENT_RUN_TIMEOUT_SECONDS,
  /** ≥ 6 × the consumer's timeout (AWS's advice for an SQS event source), so a message is not redelivered while it runs. */
  visibilityTimeoutSeconds: 6 * SETTLEMENT_RUN_TIMEOUT_SECONDS,
  maxReceiveCount: 3,
  /** One continuation per invocation: each is a whole run. */
  batchSize: 1,
  /** Continuations at once (the event source's maximum concurrency; SQS's minimum is 2): group leases keep them apart. */
  maxConcurrency: 2,
  retentionDays: 4,
  deadLetterRetentionDays: 14,
} as const;
