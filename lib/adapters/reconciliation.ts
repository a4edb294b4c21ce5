/** Reconciliation: the reconciliation index, the processor (its intents), and the processor event's own path. */
import { config } from '../config';
import { processor } from '../processor';
import { RECONCILIATION_SHARDS } from '../store/keys';
import { listDue, markChecked } from '../store/reconciliation';
import type { ReconciliationDeps, ReconciliationLimits } from '../use-cases/reconciliation';
import { paymentEventDeps } from './payment-events';

export const reconciliationDeps: ReconciliationDeps = {
  processor,
  queue: { shards: RECONCILIATION_SHARDS, listDue, markChecked },
  paymentEvents: paymentEventDeps,
  now: () => new Date(),
};

/** `RECONCILIATION_MIN_AGE_SECONDS`, `RECONCILIATION_MAX_CHECKS`; a handful of processor calls at once. */
export const reconciliationLimits: ReconciliationLimits = {
  minAgeMs: config.RECONCILIATION_MIN_AGE_SECONDS * 1000,
  maxChecks: config.RECONCILIATION_MAX_CHECKS,
  concurrency: 4,
};
