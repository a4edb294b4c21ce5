/**
 * The settlement continuation (decisions.md §7, docs/settlement.md): a run (`POST /settlements/run`, the schedule, or
 * an earlier continuation) that could not finish in its function's time sent what is left as a queue message (its
 * scope and its cutoff); this function runs it, with its own 15 minutes, and sends another if it again cannot finish
 * (never after a continuation that made nothing). One message at a time (batch size 1). A run that fails throws: SQS
 * gives the message again after its visibility timeout, and parks it in the dead-letter queue after 3 receives
 * (alarmed); the next scheduled run settles what it left meanwhile.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import middy from '@middy/core';
import type { Context, SQSEvent } from 'aws-lambda';
import { z } from 'zod';
import { settlementDeps } from '../lib/composition/settlement';
import { runWithDeadline } from '../lib/deadline';
import { logger, metricsMiddleware, tracer } from '../lib/observability';
import { settle, type SettlementDeps } from '../lib/use-cases/settlements';

/** Kept for logging and answering after the last batch. */
const ANSWER_RESERVE_MS = 2_000;

const Continuation = z.strictObject({
  scope: z.strictObject({ partnerId: z.string().min(1).optional(), clientId: z.string().min(1).optional() }),
  cutoff: z.iso.datetime(),
  attempt: z.number().int().min(1),
});

/** The consumer over given adapters, without the Lambda chain (tests inject the adapters). */
export const createHandler = (deps: SettlementDeps) => async (event: SQSEvent, context?: Pick<Context, 'getRemainingTimeInMillis'>) => {
  for (const record of event.Records) {
    const parsed = Continuation.safeParse(JSON.parse(record.body));
    if (!parsed.success) {
      // Not ours to retry: a message the service did not write is dropped, loudly.
      logger.error('A settlement continuation that is not one was dropped', { messageId: record.messageId, issues: parsed.error.issues });
      continue;
    }
    const { scope, cutoff, attempt } = parsed.data;
    const work = () => settle(deps, scope, { cutoff, attempt });
    const run = context === undefined ? await work() : await runWithDeadline(Date.now() + context.getRemainingTimeInMillis() - ANSWER_RESERVE_MS, work);
    logger.info('settlement run continued', { attempt, createdBatches: run.batches.length, continuing: run.continuing });
  }
};

export const handler = middy(createHandler(settlementDeps))
  .use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }))
  .use(captureLambdaHandler(tracer, { captureResponse: false }))
  .use(metricsMiddleware());
