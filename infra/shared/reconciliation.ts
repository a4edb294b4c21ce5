/**
 * The reconciliation schedule's settings, shared by the CDK stack (`infra/aws/reconciliation-stack.ts`) and the local
 * runtime's timer (`infra/local/runtime/runtime.ts`), so both run the same function the same way. Pure data.
 */
export const RECONCILIATION = {
  /** decisions.md §12: every 15 minutes (the local default `RECONCILIATION_SCHEDULE` is the same rate). */
  rateMinutes: 15,
  /**
   * A run asks about at most `RECONCILIATION_MAX_CHECKS` (500) transactions, 4 processor calls at a time: well within
   * 5 minutes, and the run stops starting checks before its deadline anyway. Shorter than the rate, so runs rarely meet.
   */
  timeoutSeconds: 5 * 60,
  /** The backlog alarm: the earliest due look, at a run's start, due for longer than this (four runs' time). */
  oldestDueAlarmSeconds: 60 * 60,
} as const;
