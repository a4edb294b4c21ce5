/**
 * The partner webhook delivery pipeline of the local runtime, the same shape as in AWS (README: Architecture):
 * outbox (the table) → stream relay and sweep → delivery queue → consumer. Started by `startLocalRuntime` with the
 * handlers of `functions/` (outbox-relay, outbox-sweep, webhook-delivery); the handlers are parameters so a test
 * can compose the same pipeline around a stub consumer.
 *
 * Start order: the queue and its SQS front (the relay and the sweep send to it through the SQS client), then
 * the stream relay (from the stream's newest record), then a first sweep, which relays every delivery not yet
 * attempted (the queue starts empty, so no message for any of them is on its way: a process that died between
 * a delivery's write and its enqueue loses nothing), then a sweep every few seconds. Stopping goes the other
 * way: the sweep timer, the relay (its running invocation finishes), the queue (the consumer batches running
 * finish, and may still enqueue their retries), and last the front.
 */
import { randomUUID } from 'node:crypto';
import type { Context, ScheduledEvent } from 'aws-lambda';
import { DELIVERY_QUEUE, OUTBOX_RELAY, OUTBOX_SWEEP } from '../../shared/webhook-delivery';
import { type Clock, LocalDeliveryQueue, type SqsConsumer } from './queue';
import { invokeFunction } from '../lambda/adapter';
import { startSqsFront } from './sqs-front';
import { startStreamRelay, type StreamHandler } from './stream-relay';
import { stopsInReverse } from '../stops';

export type SweepHandler = (event: ScheduledEvent<{ queueEmpty?: boolean }>, context: Context) => Promise<unknown>;

export interface DeliveryPipelineOptions {
  dynamoEndpoint: string;
  tableName: string;
  /** The SQS front's port (`WEBHOOK_QUEUE_PORT`; 0: any free port). */
  queuePort: number;
  consumer: SqsConsumer;
  relay: StreamHandler;
  sweep: SweepHandler;
  sweepIntervalMs?: number;
  /** Consumer invocations at once (default: the AWS event source's maximum concurrency). */
  consumerConcurrency?: number;
  /** For the queue's timers (tests). */
  clock?: Clock;
  /** More queues its SQS front takes messages for, by name (the settlement continuations). */
  otherQueues?: Readonly<Record<string, LocalDeliveryQueue>>;
}

export interface DeliveryPipeline {
  /** The local queue: its dead-letter list and depth, for inspection. */
  queue: LocalDeliveryQueue;
  /** The queue's URL at its SQS front. */
  queueUrl: string;
  /** Runs a sweep now (after the one running, if any). */
  sweepNow(): Promise<void>;
  stop(): Promise<void>;
}

export async function startDeliveryPipeline(options: DeliveryPipelineOptions): Promise<DeliveryPipeline> {
  const stops = stopsInReverse();
  const { stop } = stops;
  try {
    const queue = new LocalDeliveryQueue({
      name: DELIVERY_QUEUE.name,
      visibilityTimeoutSeconds: DELIVERY_QUEUE.visibilityTimeoutSeconds,
      maxReceiveCount: DELIVERY_QUEUE.maxReceiveCount,
      batchSize: DELIVERY_QUEUE.batchSize,
      maxConcurrency: options.consumerConcurrency ?? DELIVERY_QUEUE.maxConcurrency,
      consumer: options.consumer,
      consumerName: 'webhook-delivery',
      consumerTimeoutSeconds: DELIVERY_QUEUE.consumerTimeoutSeconds,
      ...(options.clock === undefined ? {} : { clock: options.clock }),
      onDeadLetter: (letter) =>
        console.error(`[delivery-queue] message ${letter.messageId} ${letter.body} moved to the dead-letter list after ${letter.receiveCount} receives`),
      onConsumerError: (error) => console.error('[delivery-queue] the consumer failed its batch; its messages will be received again', error),
    });
    const front = await startSqsFront({ port: options.queuePort, queue, queueName: DELIVERY_QUEUE.name, ...(options.otherQueues === undefined ? {} : { otherQueues: options.otherQueues }) });
    stops.push(front.close);
    stops.push(() => queue.stop());

    const relay = startStreamRelay({
      endpoint: options.dynamoEndpoint,
      tableName: options.tableName,
      handler: options.relay,
      handlerName: 'outbox-relay',
      handlerTimeoutSeconds: OUTBOX_RELAY.consumerTimeoutSeconds,
      filterPattern: OUTBOX_RELAY.filterPattern,
      batchSize: OUTBOX_RELAY.batchSize,
      retryAttempts: OUTBOX_RELAY.retryAttempts,
      onError: (message, error) => console.error(message, ...(error === undefined ? [] : [error])),
    });
    stops.push(relay.stop);
    await relay.ready;

    const sweeper = startSweeper(options.sweep, options.sweepIntervalMs ?? OUTBOX_SWEEP.localIntervalMs);
    stops.push(sweeper.stop);
    await sweeper.sweepNow();

    return { queue, queueUrl: front.queueUrl, sweepNow: sweeper.sweepNow, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Runs the sweep function as EventBridge would (a scheduled event), one run at a time: now and then every
 * `intervalMs`. Until one run succeeds the queue is known to be empty, and runs say so (`detail.queueEmpty`).
 */
function startSweeper(sweep: SweepHandler, intervalMs: number) {
  let queueEmpty = true;
  let stopped = false;
  let queued = 0;
  let running: Promise<void> = Promise.resolve();
  const runOnce = async () => {
    try {
      await invokeFunction(sweep, scheduledEvent({ queueEmpty }), 'outbox-sweep', OUTBOX_SWEEP.timeoutSeconds * 1000);
      queueEmpty = false;
    } catch (error) {
      console.error('[outbox-sweep] sweep failed; the next one tries again', error);
    } finally {
      queued -= 1;
    }
  };
  const sweepNow = () => {
    queued += 1;
    running = running.then(() => (stopped ? void (queued -= 1) : runOnce()));
    return running;
  };
  // A tick while a sweep still runs (a slow table) is skipped rather than queued.
  const timer = setInterval(() => void (queued === 0 ? sweepNow() : undefined), intervalMs);
  return {
    sweepNow,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}

const scheduledEvent = (detail: { queueEmpty?: boolean }): ScheduledEvent<{ queueEmpty?: boolean }> => ({
  version: '0',
  id: randomUUID(),
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  account: '000000000000',
  time: new Date().toISOString(),
  region: 'local',
  resources: ['arn:aws:events:local:000000000000:rule/outbox-sweep'],
  detail,
});
