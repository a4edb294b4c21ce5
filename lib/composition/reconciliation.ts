/** Reconciliation: the reconciliation index, the processor (its intents), and the processor event's own path. */
import { config } from '../config';
import { processor } from '../processor';
import { RECONCILIATION_SHARDS } from '../store/keys';
import { listDue, reschedule, stopWatching } from '../store/reconciliation';
import type { ReconciliationDeps, ReconciliationLimits } from '../use-cases/reconciliation';
import { paymentEventDeps } from './payment-events';

export const reconciliationDeps: ReconciliationDeps = {
  processor,
  queue: { shards: RECONCILIATION_SHARDS, listDue, reschedule, stopWatching },
  paymentEvents: paymentEventDeps,
  now: () => new Date(),
};

/** `RECONCILIATION_MAX_CHECKS`, `RECONCILIATION_GIVE_UP_DAYS`; a handful of processor calls at once. */
export const reconciliationLimits: ReconciliationLimits = {
  maxChecks: config.RECONCILIATION_MAX_CHECKS,
  concurrency: 4,
  giveUpAfterMs: config.RECONCILIATION_GIVE_UP_DAYS * 24 * 60 * 60_000,
};
