/**
 * The local stand-in for the SQS delivery queue and its Lambda event source mapping (decisions.md §1): an
 * in-process standard queue with SQS's semantics, feeding the same consumer handler with SQS-shaped events.
 *
 * - A message sent with `delaySeconds` is invisible until the delay has passed.
 * - Receiving a message (handing it to the consumer in a batch of up to `batchSize`) makes it invisible for the
 *   visibility timeout and counts a receive (`attributes.ApproximateReceiveCount`).
 * - When the consumer returns, every record it did not report in `batchItemFailures` is deleted; the reported
 *   ones (or the whole batch, if it threw or reported an identifier that is not in the batch, as Lambda does)
 *   stay, and are received again once their visibility timeout has passed.
 * - A message already received `maxReceiveCount` times is moved to the dead-letter list instead of being
 *   received again (SQS's redrive policy). The list is kept for inspection ({@link LocalDeliveryQueue.deadLetters}).
 * - It is a fair queue (decisions.md §8): a message's `MessageGroupId` names its tenant (the partner), and
 *   receives hand out quiet tenants' messages before a noisy tenant's backlog ({@link TenantShares}).
 *
 * Batches go to the consumer one at a time by default: one warm Lambda container, whose handler may keep
 * per-invocation state at module level (Powertools' batch processor does). Messages live in memory: those still
 * queued when the process stops are lost, and the outbox sweep sends their deliveries again at the next start.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { TenantShares } from './fair-share';
import { invokeFunction } from '../lambda/adapter';

export type SqsConsumer = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void | undefined>;

/** Time as the queue sees it: the system clock, or a test's. */
export interface Clock {
  now(): number;
  /** Calls `callback` after `ms`; returns a function that cancels it. */
  schedule(callback: () => void, ms: number): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  schedule: (callback, ms) => {
    const timer = setTimeout(callback, ms);
    return () => clearTimeout(timer);
  },
};

export interface LocalDeliveryQueueOptions {
  name: string;
  visibilityTimeoutSeconds: number;
  maxReceiveCount: number;
  /** Messages per consumer invocation, at most (SQS: 10). */
  batchSize: number;
  /** Consumer invocations at once (default 1: one warm container). */
  maxConcurrency?: number;
  consumer: SqsConsumer;
  /** The consumer's Lambda name and timeout, for its context. */
  consumerName: string;
  consumerTimeoutSeconds: number;
  clock?: Clock;
  /** Told of each message moved to the dead-letter list (the runtime logs it). */
  onDeadLetter?: (message: DeadLetter) => void;
  /** Told when the consumer throws (the runtime logs it; the batch's messages stay in the queue). */
  onConsumerError?: (error: unknown) => void;
}

export interface DeadLetter {
  messageId: string;
  body: string;
  groupId: string | undefined;
  receiveCount: number;
  sentAt: string;
  deadLetteredAt: string;
}

interface Message {
  messageId: string;
  body: string;
  /** `MessageGroupId`: the tenant, for the fair queue's order. */
  groupId: string | undefined;
  md5OfBody: string;
  sentAt: number;
  /** When it can next be received: the end of its delay, or of its visibility timeout after a receive. */
  visibleAt: number;
  receiveCount: number;
  firstReceivedAt: number | undefined;
  receiptHandle: string | undefined;
}

export interface SentMessage {
  messageId: string;
  md5OfMessageBody: string;
}

/** A message's tenant: its group, or itself when it has none (as in an SQS fair queue). */
const tenantOf = (message: Message) => message.groupId ?? `message:${message.messageId}`;

/** SQS's MD5 of a message body: hex MD5 of its UTF-8 bytes (the SDK checks it on every send). */
export const md5Hex = (body: string) => createHash('md5').update(body, 'utf8').digest('hex');

export class LocalDeliveryQueue {
  readonly arn: string;
  private readonly messages = new Map<string, Message>();
  private readonly dead: DeadLetter[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private readonly shares = new TenantShares();
  private sentCount = 0;
  private readonly clock: Clock;
  private readonly maxConcurrency: number;
  private cancelTimer: (() => void) | undefined;
  private timerAt: number | undefined;
  private stopped = false;

  constructor(private readonly options: LocalDeliveryQueueOptions) {
    this.clock = options.clock ?? systemClock;
    this.maxConcurrency = options.maxConcurrency ?? 1;
    this.arn = `arn:aws:sqs:local:000000000000:${options.name}`;
  }

  /**
   * SQS `SendMessage`: queues `body`, receivable after `delaySeconds` (0-900), of tenant `groupId`
   * (`MessageGroupId`; none: a tenant of its own). A stopped queue still accepts (a batch finishing during
   * shutdown schedules its retries) but hands nothing more to the consumer.
   */
  sendMessage(body: string, delaySeconds = 0, groupId?: string): SentMessage {
    const now = this.clock.now();
    const message: Message = {
      messageId: randomUUID(),
      body,
      groupId,
      md5OfBody: md5Hex(body),
      sentAt: now,
      visibleAt: now + delaySeconds * 1000,
      receiveCount: 0,
      firstReceivedAt: undefined,
      receiptHandle: undefined,
    };
    this.messages.set(message.messageId, message);
    this.sentCount += 1;
    // Received on the next turn, not now: messages sent together arrive together, in batches.
    this.wakeAtNextVisible();
    return { messageId: message.messageId, md5OfMessageBody: message.md5OfBody };
  }

  /** Messages moved to the dead-letter list, oldest first. */
  deadLetters(): DeadLetter[] {
    return [...this.dead];
  }

  /** Messages in the queue: delayed, visible, or received and not yet deleted (SQS's three approximate counts). */
  get depth(): number {
    return this.messages.size;
  }

  /** Messages that could be received now (neither delayed nor in flight): 0 once the consumer has caught up. */
  visibleCount(): number {
    return this.stats().visible;
  }

  /**
   * For an operator or a bench looking from outside (`GET /stats` on the front): messages sent since start, in the
   * queue, receivable now, and received by a consumer that has not returned yet.
   */
  stats(): { sent: number; depth: number; visible: number; inFlight: number } {
    const now = this.clock.now();
    let visible = 0;
    let inFlight = 0;
    for (const message of this.messages.values()) {
      if (message.visibleAt <= now) visible += 1;
      else if (message.receiveCount > 0) inFlight += 1;
    }
    return { sent: this.sentCount, depth: this.depth, visible, inFlight };
  }

  /** Stops receiving, and resolves once the consumer batches already running have returned (and been settled). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Hands visible messages to the consumer, a batch per free slot, then sleeps until the next becomes visible. */
  private pump(): void {
    if (this.stopped) return;
    while (this.inFlight.size < this.maxConcurrency) {
      const batch = this.receiveBatch();
      if (batch.length === 0) break;
      const running = this.invoke(batch).finally(() => {
        this.inFlight.delete(running);
        this.pump();
      });
      this.inFlight.add(running);
    }
    this.wakeAtNextVisible();
  }

  /**
   * Receives up to a batch of visible messages, quiet tenants' first, then oldest first; a message past its
   * receives goes to the dead-letter list.
   */
  private receiveBatch(): Message[] {
    const now = this.clock.now();
    const visible = [...this.messages.values()].filter((message) => message.visibleAt <= now).sort((a, b) => a.visibleAt - b.visibleAt || a.sentAt - b.sentAt);
    const batch: Message[] = [];
    for (const message of this.shares.order(visible, tenantOf, now)) {
      if (batch.length === this.options.batchSize) break;
      if (message.receiveCount >= this.options.maxReceiveCount) {
        this.deadLetter(message, now);
        continue;
      }
      message.receiveCount += 1;
      message.firstReceivedAt ??= now;
      message.receiptHandle = randomUUID();
      message.visibleAt = now + this.options.visibilityTimeoutSeconds * 1000;
      this.shares.received(message.messageId, tenantOf(message), now);
      batch.push(message);
    }
    return batch;
  }

  private deadLetter(message: Message, now: number): void {
    this.messages.delete(message.messageId);
    const letter: DeadLetter = {
      messageId: message.messageId,
      body: message.body,
      groupId: message.groupId,
      receiveCount: message.receiveCount,
      sentAt: new Date(message.sentAt).toISOString(),
      deadLetteredAt: new Date(now).toISOString(),
    };
    this.dead.push(letter);
    this.options.onDeadLetter?.(letter);
  }

  /** One consumer invocation; then deletes what succeeded (Lambda's handling of an SQS batch response). */
  private async invoke(batch: Message[]): Promise<void> {
    const handles = new Map(batch.map((message) => [message.messageId, message.receiptHandle]));
    let failed: Set<string>;
    try {
      const response = await invokeFunction(
        this.options.consumer,
        { Records: batch.map((message) => this.toRecord(message)) },
        this.options.consumerName,
        this.options.consumerTimeoutSeconds * 1000,
      );
      const reported = (response ?? undefined)?.batchItemFailures ?? [];
      // An identifier that is not one of the batch's message ids fails the whole batch, as in Lambda.
      failed = reported.every((failure) => handles.has(failure.itemIdentifier))
        ? new Set(reported.map((failure) => failure.itemIdentifier))
        : new Set(handles.keys());
    } catch (error) {
      this.options.onConsumerError?.(error);
      failed = new Set(handles.keys());
    }
    for (const [messageId, handle] of handles) {
      this.shares.released(messageId, this.clock.now());
      // Deleted only under the receipt it was handed out with: a message received again meanwhile stays.
      if (!failed.has(messageId) && this.messages.get(messageId)?.receiptHandle === handle) this.messages.delete(messageId);
    }
  }

  private toRecord(message: Message): SQSRecord {
    return {
      messageId: message.messageId,
      receiptHandle: message.receiptHandle ?? '',
      body: message.body,
      attributes: {
        ApproximateReceiveCount: String(message.receiveCount),
        SentTimestamp: String(message.sentAt),
        SenderId: 'local',
        ApproximateFirstReceiveTimestamp: String(message.firstReceivedAt ?? message.sentAt),
        ...(message.groupId === undefined ? {} : { MessageGroupId: message.groupId }),
      },
      messageAttributes: {},
      md5OfBody: message.md5OfBody,
      eventSource: 'aws:sqs',
      eventSourceARN: this.arn,
      awsRegion: 'local',
    };
  }

  /** One timer, for the earliest moment a message becomes visible (none while every consumer slot is busy). */
  private wakeAtNextVisible(): void {
    if (this.stopped || this.inFlight.size >= this.maxConcurrency) return;
    let next: number | undefined;
    for (const message of this.messages.values()) if (next === undefined || message.visibleAt < next) next = message.visibleAt;
    if (next === this.timerAt) return;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.timerAt = next;
    if (next === undefined) return;
    this.cancelTimer = this.clock.schedule(() => {
      this.cancelTimer = undefined;
      this.timerAt = undefined;
      this.pump();
    }, Math.max(0, next - this.clock.now()));
  }
}
