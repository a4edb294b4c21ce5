/**
 * The reconciliation schedule (decisions.md §12): asks the processor about every transaction still waiting for its
 * word some minutes after its last change, and applies what it says through the processor event's path
 * (`lib/use-cases/reconciliation.ts`). In AWS an EventBridge rule invokes it every 15 minutes; locally the runtime's
 * timer does (`RECONCILIATION_SCHEDULE`, default `rate(15 minutes)`).
 *
 * The run starts no check in the last seconds before the function's deadline (what is left is still due, oldest
 * first, for the next run). Wrapped like the other non-HTTP functions: logger context, trace segment, and the
 * metrics it counts (`ReconciliationChecked`, `ReconciliationFixed` ...) flushed at the end of each invocation.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { reconciliationDeps, reconciliationLimits } from '../lib/composition/reconciliation';
import { runWithDeadline } from '../lib/deadline';
import { logger, metricsMiddleware, tracer } from '../lib/observability';
import { type ReconciliationDeps, type ReconciliationLimits, runReconciliation } from '../lib/use-cases/reconciliation';

/** Kept for logging and answering after the last check. */
const ANSWER_RESERVE_MS = 2_000;

/** The run over given adapters and limits, without the Lambda chain (tests inject them); `handler` uses the process's own. */
export const createHandler =
  (deps: ReconciliationDeps, limits: ReconciliationLimits) => async (_event: unknown, context?: Pick<Context, 'getRemainingTimeInMillis'>) => {
    const work = () => runReconciliation(deps, limits);
    return context === undefined ? work() : runWithDeadline(Date.now() + context.getRemainingTimeInMillis() - ANSWER_RESERVE_MS, work);
  };

/** `createHandler(deps, limits)` in the function's chain: logger context, trace segment, metrics flushed per invocation. */
export const createLambdaHandler = (deps: ReconciliationDeps, limits: ReconciliationLimits) =>
  middy(createHandler(deps, limits))
    .use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }))
    .use(captureLambdaHandler(tracer, { captureResponse: false }))
    .use(metricsMiddleware());

export const handler = createLambdaHandler(reconciliationDeps, reconciliationLimits);
