/**
 * When the local delivery pipeline is idle, so that a test can count what arrived and know that nothing more will:
 * a test that sleeps "long enough" and then counts proves nothing on a loaded machine (the late duplicate may
 * simply not have come yet) and wastes the sleep on a fast one.
 *
 * Idle means, at one moment: every delivery the test names has been handed to the stream relay, and that relay
 * invocation has returned (so its message is in the queue); no relay or sweep invocation is running; the queue
 * holds no message at all, delayed, visible or being consumed (a retry, a breaker's wake, a duplicate are all
 * messages, and a consumer batch's messages stay in the queue until it returns); and no named delivery is still
 * pending. From then on nothing can send another attempt but a new write, so call it after the test's last action
 * has been answered. (A delivery written before the pipeline started never reaches the stream relay, only the
 * sweep: this is not the wait for it.)
 */
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';

// The shapes this file needs of the local pipeline, written out rather than imported from the local runtime.
type StreamHandler = (event: DynamoDBStreamEvent, context: Context) => Promise<DynamoDBBatchResponse | void | undefined>;
type Handler<E> = (event: E, context: Context) => Promise<unknown>;
/** The pipeline, as far as idleness reads it: its queue's counts. */
export interface WatchedPipeline {
  queue: { stats(): { depth: number } };
}

/** A delivery as the admin list shows it: what idleness needs of it. */
export interface ListedDelivery {
  id: string;
  status: string;
}

export interface PipelineWatch<SweepEvent> {
  /** The relay handler to give the pipeline: `relay`, noting which deliveries it has relayed. */
  relay: StreamHandler;
  /** The sweep handler to give the pipeline: `sweep`, noting when one runs. */
  sweep: Handler<SweepEvent>;
  /**
   * Resolves once the pipeline is idle for the deliveries `listDeliveries` returns (read again on each look);
   * rejects after `timeoutMs`, saying what was still under way.
   */
  untilIdle(pipeline: WatchedPipeline, listDeliveries: () => Promise<ListedDelivery[]>, timeoutMs?: number): Promise<void>;
}

const deliveryIdOf = (record: DynamoDBRecord) => record.dynamodb?.NewImage?.id?.S;

export function watchPipeline<SweepEvent>(relay: StreamHandler, sweep: Handler<SweepEvent>): PipelineWatch<SweepEvent> {
  const relayed = new Set<string>();
  let relaying = 0;
  let sweeping = 0;

  const watchedRelay: StreamHandler = async (event: DynamoDBStreamEvent, context) => {
    relaying += 1;
    try {
      const response = await relay(event, context);
      // A record reported failed is read again from the stream: relayed only once it is not.
      const failed = new Set((response ?? undefined)?.batchItemFailures?.map((failure) => failure.itemIdentifier) ?? []);
      for (const record of event.Records) {
        const id = deliveryIdOf(record);
        if (id !== undefined && !failed.has(record.dynamodb?.SequenceNumber ?? '')) relayed.add(id);
      }
      return response;
    } finally {
      relaying -= 1;
    }
  };
  const watchedSweep: Handler<SweepEvent> = async (event, context) => {
    sweeping += 1;
    try {
      return await sweep(event, context);
    } finally {
      sweeping -= 1;
    }
  };

  return {
    relay: watchedRelay,
    sweep: watchedSweep,
    async untilIdle(pipeline, listDeliveries, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const deliveries = await listDeliveries();
        // Everything below is read in one synchronous step, after the (asynchronous) list: one moment.
        const queue = pipeline.queue.stats();
        const unrelayed = deliveries.filter((delivery) => !relayed.has(delivery.id)).map((delivery) => delivery.id);
        const pending = deliveries.filter((delivery) => delivery.status === 'pending').map((delivery) => delivery.id);
        if (unrelayed.length === 0 && pending.length === 0 && relaying === 0 && sweeping === 0 && queue.depth === 0) return;
        if (Date.now() > deadline) {
          const busy = { unrelayed, pending, relaying, sweeping, queue };
          throw new Error(`the delivery pipeline was not idle within ${timeoutMs} ms: ${JSON.stringify(busy)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
  };
}
