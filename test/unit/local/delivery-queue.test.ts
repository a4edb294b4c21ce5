/**
 * The local delivery queue keeps SQS's semantics (decisions.md §1): delay, visibility timeout and redelivery,
 * receive counts, redrive to the dead-letter list, partial batch failures, batches of at most 10. Time is a
 * test clock, so each boundary is checked to the millisecond.
 */
import { describe, expect, it } from '@jest/globals';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { type Clock, type DeadLetter, LocalDeliveryQueue, md5Hex, type SqsConsumer } from '../../../infra/local/delivery/queue';

class TestClock implements Clock {
  private time = 1_700_000_000_000;
  private timers: Array<{ at: number; callback: () => void }> = [];

  now = () => this.time;

  schedule = (callback: () => void, ms: number) => {
    const timer = { at: this.time + ms, callback };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((candidate) => candidate !== timer);
    };
  };

  /** Moves time forward by `ms`, firing each timer at its moment and letting the consumer's promises settle. */
  async advance(ms: number): Promise<void> {
    const target = this.time + ms;
    await settle();
    for (;;) {
      const next = this.timers.filter((timer) => timer.at <= target).sort((a, b) => a.at - b.at)[0];
      if (next === undefined) break;
      this.timers = this.timers.filter((timer) => timer !== next);
      this.time = Math.max(this.time, next.at);
      next.callback();
      await settle();
    }
    this.time = target;
    await settle();
  }
}

/** Lets pending promise callbacks (a consumer's answer, the queue's bookkeeping after it) run. */
const settle = async () => {
  for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
};

/** A consumer that records each batch and answers as `answer` says (default: every record succeeded). */
function recordingConsumer(answer: (event: SQSEvent) => SQSBatchResponse | Promise<SQSBatchResponse> = () => ({ batchItemFailures: [] })) {
  const batches: SQSEvent[] = [];
  const consumer: SqsConsumer = async (event) => {
    batches.push(event);
    return answer(event);
  };
  const received = () => batches.flatMap((batch) => batch.Records);
  return { consumer, batches, received };
}

function queueWith(consumer: SqsConsumer, clock: Clock, overrides: { maxReceiveCount?: number; onDeadLetter?: (letter: DeadLetter) => void; maxConcurrency?: number } = {}) {
  return new LocalDeliveryQueue({
    name: 'partner-webhooks',
    visibilityTimeoutSeconds: 30,
    maxReceiveCount: overrides.maxReceiveCount ?? 5,
    batchSize: 10,
    maxConcurrency: overrides.maxConcurrency ?? 1,
    consumer,
    consumerName: 'webhook-delivery',
    consumerTimeoutSeconds: 30,
    clock,
    ...(overrides.onDeadLetter === undefined ? {} : { onDeadLetter: overrides.onDeadLetter }),
  });
}

const failing = (...messageIds: string[]): SQSBatchResponse => ({ batchItemFailures: messageIds.map((itemIdentifier) => ({ itemIdentifier })) });

describe('the local delivery queue', () => {
  it('hands a message over at once, as an SQS record the consumer can read', async () => {
    const clock = new TestClock();
    const { consumer, batches } = recordingConsumer();
    const queue = queueWith(consumer, clock);

    const sent = queue.sendMessage('{"deliveryId":"dlv_1"}');
    await clock.advance(0);

    expect(sent.md5OfMessageBody).toBe(md5Hex('{"deliveryId":"dlv_1"}'));
    expect(batches).toHaveLength(1);
    expect(batches[0]?.Records).toEqual([
      expect.objectContaining({
        messageId: sent.messageId,
        receiptHandle: expect.stringMatching(/.+/),
        body: '{"deliveryId":"dlv_1"}',
        md5OfBody: sent.md5OfMessageBody,
        eventSource: 'aws:sqs',
        eventSourceARN: 'arn:aws:sqs:local:000000000000:partner-webhooks',
        attributes: expect.objectContaining({ ApproximateReceiveCount: '1', SentTimestamp: String(clock.now()) }),
      }),
    ]);
    expect(queue.depth).toBe(0);
  });

  it('keeps a delayed message invisible until its delay has passed', async () => {
    const clock = new TestClock();
    const { consumer, received } = recordingConsumer();
    const queue = queueWith(consumer, clock);

    queue.sendMessage('late', 5);
    await clock.advance(4_999);
    expect(received()).toHaveLength(0);

    await clock.advance(1);
    expect(received().map((record) => record.body)).toEqual(['late']);
  });

  it('hands over at most 10 messages a batch', async () => {
    const clock = new TestClock();
    const { consumer, batches } = recordingConsumer();
    const queue = queueWith(consumer, clock);

    for (let i = 0; i < 25; i += 1) queue.sendMessage(`m${i}`);
    await clock.advance(0);

    expect(batches.map((batch) => batch.Records.length)).toEqual([10, 10, 5]);
    expect(new Set(batches.flatMap((batch) => batch.Records.map((record) => record.body))).size).toBe(25);
  });

  it('deletes the records that succeeded and receives a reported failure again after the visibility timeout, counting receives', async () => {
    const clock = new TestClock();
    let failNext: string | undefined;
    const { consumer, received } = recordingConsumer((event) => failing(...event.Records.filter((record) => record.body === failNext).map((record) => record.messageId)));
    const queue = queueWith(consumer, clock);
    failNext = 'fails once';
    const failed = queue.sendMessage('fails once');
    queue.sendMessage('succeeds');
    await clock.advance(0);
    failNext = undefined;

    // Invisible for the whole visibility timeout (30 s), then received again with its receive count
    await clock.advance(29_999);
    expect(received()).toHaveLength(2);
    await clock.advance(1);

    const again = received().slice(2);
    expect(again).toHaveLength(1);
    expect(again[0]).toMatchObject({ messageId: failed.messageId, body: 'fails once', attributes: { ApproximateReceiveCount: '2' } });
    expect(again[0]?.receiptHandle).not.toBe(received()[0]?.receiptHandle);
    // Now succeeded: nothing is left, nothing comes again
    await clock.advance(120_000);
    expect(received()).toHaveLength(3);
    expect(queue.depth).toBe(0);
  });

  it('receives the whole batch again when the consumer throws, or reports an id that is not in the batch', async () => {
    for (const answer of [
      () => Promise.reject(new Error('table unavailable')),
      () => failing('not-a-message-id-of-this-batch'),
    ]) {
      const clock = new TestClock();
      let calls = 0;
      const { consumer, received } = recordingConsumer(async () => (calls++ === 0 ? answer() : { batchItemFailures: [] }));
      const queue = queueWith(consumer, clock);
      queue.sendMessage('a');
      queue.sendMessage('b');
      await clock.advance(0);

      await clock.advance(30_000);

      expect(received().map((record) => [record.body, record.attributes.ApproximateReceiveCount])).toEqual([
        ['a', '1'],
        ['b', '1'],
        ['a', '2'],
        ['b', '2'],
      ]);
      expect(queue.depth).toBe(0);
    }
  });

  it('moves a message received maxReceiveCount times to the dead-letter list instead of receiving it again', async () => {
    const clock = new TestClock();
    const { consumer, received } = recordingConsumer((event) => failing(...event.Records.map((record) => record.messageId)));
    const told: DeadLetter[] = [];
    const queue = queueWith(consumer, clock, { maxReceiveCount: 3, onDeadLetter: (letter) => told.push(letter) });
    const sent = queue.sendMessage('{"deliveryId":"dlv_poison"}');

    await clock.advance(0);
    await clock.advance(30_000);
    await clock.advance(30_000);
    expect(received().map((record) => record.attributes.ApproximateReceiveCount)).toEqual(['1', '2', '3']);
    expect(queue.deadLetters()).toEqual([]);

    // The next time it would be received, it is moved instead
    await clock.advance(30_000);

    expect(received()).toHaveLength(3);
    expect(queue.deadLetters()).toEqual([expect.objectContaining({ messageId: sent.messageId, body: '{"deliveryId":"dlv_poison"}', receiveCount: 3 })]);
    expect(told).toEqual(queue.deadLetters());
    expect(queue.depth).toBe(0);
  });

  it('runs one batch at a time by default, and stop() waits for the running batch before resolving', async () => {
    const clock = new TestClock();
    let release: () => void = () => undefined;
    const { consumer, batches } = recordingConsumer(() => new Promise((resolve) => (release = () => resolve({ batchItemFailures: [] }))));
    const queue = queueWith(consumer, clock);
    queue.sendMessage('first');
    await clock.advance(0);
    queue.sendMessage('second');
    await clock.advance(0);
    expect(batches).toHaveLength(1);

    let stopped = false;
    const stopping = queue.stop().then(() => (stopped = true));
    await settle();
    expect(stopped).toBe(false);

    release();
    await stopping;
    expect(stopped).toBe(true);
    // Stopped: the second message is not handed over
    await clock.advance(60_000);
    expect(batches).toHaveLength(1);
  });
});

describe('the local delivery queue, fair per partner (an SQS fair queue)', () => {
  it('carries each message’s group as MessageGroupId', async () => {
    const clock = new TestClock();
    const { consumer, received } = recordingConsumer();
    const queue = queueWith(consumer, clock);

    queue.sendMessage('{"deliveryId":"dlv_1"}', 0, 'ptn_a');
    await clock.advance(0);

    expect(received()[0]?.attributes.MessageGroupId).toBe('ptn_a');
  });

  it('hands a quiet partner’s message to the next free consumer before a noisy partner’s backlog', async () => {
    // Arrange: partner A's batches hold the consumer 10 s each (a slow endpoint); B is quiet
    const clock = new TestClock();
    const order: string[] = [];
    const consumer: SqsConsumer = async (event) => {
      order.push(...event.Records.map((record) => record.body));
      if (event.Records.some((record) => record.attributes.MessageGroupId === 'ptn_a')) {
        await new Promise<void>((resolve) => clock.schedule(resolve, 10_000));
      }
      return { batchItemFailures: [] };
    };
    const queue = queueWith(consumer, clock, { maxConcurrency: 2 });
    for (let i = 0; i < 100; i += 1) queue.sendMessage(`a${i}`, 0, 'ptn_a');
    await clock.advance(0);
    expect(order).toHaveLength(20); // both consumers busy with A

    // Act: B's message arrives behind A's 80 waiting ones
    clock.schedule(() => undefined, 1);
    queue.sendMessage('b0', 0, 'ptn_b');
    await clock.advance(10_000);

    // Assert: the first batch after A's frees a consumer starts with B's message, not A's oldest
    expect(order[20]).toBe('b0');
  });

  it('keeps oldest-first order when no partner is noisy', async () => {
    const clock = new TestClock();
    const { consumer, received } = recordingConsumer();
    const queue = queueWith(consumer, clock);
    queue.sendMessage('first', 0, 'ptn_a');
    queue.sendMessage('second', 0, 'ptn_b');
    queue.sendMessage('third', 0, 'ptn_a');

    await clock.advance(0);

    expect(received().map((record) => record.body)).toEqual(['first', 'second', 'third']);
  });
});
