/**
 * The partner webhook delivery consumer: an SQS handler (in AWS the delivery queue's event source, with
 * `reportBatchItemFailures`; locally the runtime's queue calls it with the same SQS-shaped events). Each
 * message `{ "deliveryId": "dlv_…" }` makes at most one attempt of its delivery (`deliverWebhook`); a message
 * `{ "wake": "whe_…" }` wakes the deliveries parked on that endpoint that it can take now (`wakeEndpoint`).
 *
 * Powertools' batch processor runs the records of a batch in parallel and answers the ids of those that threw
 * (`batchItemFailures`), so only they are received again, after the visibility timeout, and dead-lettered
 * after `maxReceiveCount`. A record throws only when it could not be processed at all: a malformed message,
 * or the table, the key or the queue unavailable. A partner answering badly is not such an error: that
 * attempt is recorded and the next one scheduled by the use case.
 *
 * Each record logs through a logger of its own carrying the delivery's `partner_id` and `svc_tx_id`
 * ({@link withDeliveryLogKeys}), so the records of one batch, which run at once, never share keys.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import * as z from 'zod';
import { webhookDeliveryDeps } from '../lib/composition/webhook-deliveries';
import { countMetric, logger, metricsMiddleware, tracer } from '../lib/observability';
import { type BreakerChange, deliverWebhook, type DeliveryStep, type WakeStep, wakeEndpoint, type WebhookDeliveryDeps } from '../lib/use-cases/webhook-deliveries';

/** The message body (lib/webhooks/queue.ts): a delivery to look at, or an endpoint whose parked deliveries to wake. */
const QueueMessageBody = z.union([
  z.object({ deliveryId: z.string().regex(/^dlv_[0-9a-z]{1,64}$/) }),
  z.object({ wake: z.string().regex(/^whe_[0-9a-z]{1,64}$/) }),
]);

/** One metric per outcome (CloudWatch names): `WebhookDeliveriesSucceeded`, `WebhookDeliveriesRetryScheduled` ... */
const STEP_METRIC: Record<DeliveryStep['outcome'], string> = {
  unknown: 'Unknown',
  finished: 'AlreadyFinished',
  'not-due': 'NotDue',
  superseded: 'Superseded',
  parked: 'Parked',
  deferred: 'Deferred',
  succeeded: 'Succeeded',
  'retry-scheduled': 'RetryScheduled',
  failed: 'Failed',
};

/** What an attempt did to its endpoint's circuit breaker: `WebhookEndpointBreakerOpened` ... */
const BREAKER_METRIC: Record<Exclude<BreakerChange, 'unchanged'>, string> = {
  opened: 'WebhookEndpointBreakerOpened',
  closed: 'WebhookEndpointBreakerClosed',
  recovering: 'WebhookEndpointBreakerRecovering',
  slow: 'WebhookEndpointSlow',
  fast: 'WebhookEndpointFast',
  'not-recorded': 'WebhookEndpointBreakerNotRecorded',
};

class UnreadableMessageError extends Error {
  override readonly name = 'UnreadableMessageError';
}

async function processRecord(deps: WebhookDeliveryDeps, record: SQSRecord): Promise<DeliveryStep | WakeStep> {
  let body: unknown;
  try {
    body = JSON.parse(record.body);
  } catch {
    body = undefined;
  }
  const message = QueueMessageBody.safeParse(body);
  const partnerId = record.attributes.MessageGroupId;
  if (!message.success || ('wake' in message.data && partnerId === undefined)) {
    throw new UnreadableMessageError(`Message ${record.messageId} is not a delivery or wake message`);
  }
  if ('wake' in message.data) return wakeRecord(deps, record, { partnerId: partnerId as string, endpointId: message.data.wake });
  const { deliveryId } = message.data;
  const recordLogger = logger.createChild();
  try {
    const step = await deliverWebhook(withDeliveryLogKeys(deps, recordLogger), { deliveryId });
    recordLogger.info('Webhook delivery message handled', { deliveryId, messageId: record.messageId, ...step });
    countMetric(`WebhookDeliveries${STEP_METRIC[step.outcome]}`);
    if ('breaker' in step && step.breaker !== undefined && step.breaker !== 'unchanged') countMetric(BREAKER_METRIC[step.breaker]);
    return step;
  } catch (error) {
    recordLogger.error('Webhook delivery message failed; it will be received again', {
      deliveryId,
      messageId: record.messageId,
      receiveCount: record.attributes.ApproximateReceiveCount,
      error: error as Error,
    });
    countMetric('WebhookDeliveryErrors');
    throw error;
  }
}

/** A wake message: `WebhookDeliveriesWoken` counts the deliveries it sent on. */
async function wakeRecord(deps: WebhookDeliveryDeps, record: SQSRecord, wake: { partnerId: string; endpointId: string }): Promise<WakeStep> {
  const recordLogger = logger.createChild({ persistentKeys: { partner_id: wake.partnerId } });
  try {
    const step = await wakeEndpoint(deps, wake);
    recordLogger.info('Webhook endpoint wake handled', { endpointId: wake.endpointId, messageId: record.messageId, ...step });
    if (step.outcome === 'woken') countMetric('WebhookDeliveriesWoken', step.woken);
    return step;
  } catch (error) {
    recordLogger.error('Webhook endpoint wake failed; it will be received again', { endpointId: wake.endpointId, messageId: record.messageId, error: error as Error });
    countMetric('WebhookDeliveryErrors');
    throw error;
  }
}

/**
 * The record's adapters, whose read of the delivery also gives the record's log lines their `partner_id` and
 * `svc_tx_id` (the keys a request about a transaction carries), as temporary keys of the record's own logger,
 * appended as soon as the use case has read the delivery (the message names only the delivery). Each record has
 * a logger of its own (`createChild`, which keeps the invocation's keys) because the records of a batch run at
 * once: keys appended to the shared logger would land on the other records' lines, and stay for the next batch.
 */
function withDeliveryLogKeys(deps: WebhookDeliveryDeps, recordLogger: Logger): WebhookDeliveryDeps {
  return {
    ...deps,
    deliveries: {
      ...deps.deliveries,
      getDelivery: async (deliveryId) => {
        const delivery = await deps.deliveries.getDelivery(deliveryId);
        if (delivery !== undefined) recordLogger.appendKeys({ partner_id: delivery.partnerId, svc_tx_id: delivery.svcTxId });
        return delivery;
      },
    },
  };
}

/**
 * The handler over given adapters (tests pass a fake queue, a short timeout, a clock). A processor per
 * invocation: the local runtime may run several batches at once in one process.
 */
export const createHandler =
  (deps: WebhookDeliveryDeps) =>
  (event: SQSEvent, context: Context): Promise<SQSBatchResponse> =>
    processPartialResponse(event, (record: SQSRecord) => processRecord(deps, record), new BatchProcessor(EventType.SQS), {
      context,
      // A batch where every record failed is answered like any other (each id listed), not thrown.
      throwOnFullBatchFailure: false,
    });

export const handler = middy(createHandler(webhookDeliveryDeps))
  .use(injectLambdaContext(logger, { resetKeys: true, logEvent: false })) // messages are ids only, but keep the chain's habit
  .use(captureLambdaHandler(tracer, { captureResponse: false }))
  .use(metricsMiddleware());
