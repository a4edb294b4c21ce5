/**
 * The settlement schedule (decisions.md §1, §7): the same run as `POST /settlements/run`, for every partner. In
 * AWS an EventBridge rule invokes it (daily by default, `SETTLEMENT_SCHEDULE` at deploy); locally the runtime's
 * timer does, only when `SETTLEMENT_SCHEDULE` is set.
 *
 * The run stops starting batches a few seconds before the function's deadline, so a long run ends with its batches
 * recorded rather than cut off, and sends what is left to the continuation queue (`functions/settlement-continuation.ts`).
 *
 * Wrapped like the other non-HTTP functions: the logger gets the invocation's context, the tracer a segment, and
 * the metrics the run counts (`SettlementBatchesCreated`, `SettlementRunFailures` ...) are flushed at the end of
 * each invocation, also one that throws.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { settlementDeps } from '../lib/composition/settlement';
import { runWithDeadline } from '../lib/deadline';
import { logger, metricsMiddleware, tracer } from '../lib/observability';
import { settle, type SettlementDeps } from '../lib/use-cases/settlements';

/** Kept for logging and answering after the last batch write. */
const ANSWER_RESERVE_MS = 2_000;

/** The run over given adapters, without the Lambda chain (tests inject the adapters); `handler` uses the process's own. */
export const createHandler = (deps: SettlementDeps) => async (_event: unknown, context?: Pick<Context, 'getRemainingTimeInMillis'>) => {
  const work = () => settle(deps, {});
  const { batches, continuing } =
    context === undefined ? await work() : await runWithDeadline(Date.now() + context.getRemainingTimeInMillis() - ANSWER_RESERVE_MS, work);
  logger.info('scheduled settlement run', { createdBatches: batches.length, continuing, batchIds: batches.slice(0, 100).map((batch) => batch.id) });
  return { created_batches: batches.length, continuing };
};

/** `createHandler(deps)` in the function's chain: logger context, trace segment, metrics flushed per invocation. */
export const createLambdaHandler = (deps: SettlementDeps) =>
  middy(createHandler(deps))
    .use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }))
    .use(captureLambdaHandler(tracer, { captureResponse: false }))
    .use(metricsMiddleware());

export const handler = createLambdaHandler(settlementDeps);
