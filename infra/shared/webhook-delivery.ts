/**
 * The partner webhook delivery pipeline's settings, shared by the CDK stacks and the local runtime (as
 * `routes.ts` is), so the queue locally behaves as the one in AWS: outbox → stream relay / sweep → delivery
 * queue → consumer. Pure data: no CDK, no I/O.
 *
 * Receive counts and delivery attempts are different things. Each HTTP attempt of a delivery is its own
 * message: the consumer handles a failed attempt by sending the next one with a delay (×1, ×4 the backoff
 * base), and reports the message done. A message is received again only when the consumer could not process
 * it at all (it threw, or reported the record as a batch item failure: DynamoDB or KMS unavailable), after
 * the visibility timeout. `maxReceiveCount` such failures in a row, about 15 minutes of retries, park the
 * message in the dead-letter queue; the delivery itself stays pending in the outbox, where the sweep finds it.
 */

export const DELIVERY_QUEUE = {
  /** The queue's name locally (its URL ends in `/<account>/<name>`, as SQS's do). */
  name: 'partner-webhooks',
  /** The consumer's timeout: a batch of up to 10 attempts in parallel, each bounded to 10 s (decisions.md §8). */
  consumerTimeoutSeconds: 30,
  /** ≥ 6 × the consumer's timeout (AWS's advice for an SQS event source), so a message is not redelivered while its batch runs. */
  visibilityTimeoutSeconds: 180,
  /** Receives before a message is moved to the dead-letter queue (see above: processing failures, not attempts). */
  maxReceiveCount: 5,
  /** Messages per consumer invocation (SQS's and the local queue's maximum for a standard queue without a window). */
  batchSize: 10,
  /**
   * Concurrent consumer invocations (the event source's maximum concurrency in AWS; the local queue's too). An
   * endpoint that does not answer holds at most one attempt at a time once its breaker is probing (and a batch
   * with it), so 20 dead endpoints of one partner leave most of this to everyone else; the fair queue hands
   * quiet partners' messages to the invocations that free up first. Idle invocations cost nothing.
   */
  maxConcurrency: 50,
  /** A message older than this is dropped by SQS; a delivery lives minutes, and the outbox keeps it anyway. */
  retentionDays: 4,
  /** Dead letters are kept for inspection and redrive. */
  deadLetterRetentionDays: 14,
} as const;

/** The stream relay's settings: what of the table's stream it receives, and how a failing batch is retried. */
export const OUTBOX_RELAY = {
  /**
   * The event source filter (Lambda's filter syntax; the local stream relay applies the same pattern): a new
   * item that is a pending delivery not yet attempted. Everything else on the stream never invokes the relay.
   */
  filterPattern: {
    eventName: ['INSERT'],
    dynamodb: {
      NewImage: {
        entity: { S: ['webhookDelivery'] },
        status: { S: ['pending'] },
        attempts: { N: ['0'] },
      },
    },
  },
  batchSize: 100,
  /** Retries of a failing batch (split in halves on each error) before its records are skipped: the sweep relays them. */
  retryAttempts: 10,
  maxRecordAgeSeconds: 3_600,
  consumerTimeoutSeconds: 30,
} as const;

/** The outbox sweep's schedule: every minute in AWS; every few seconds locally (and once at start). */
export const OUTBOX_SWEEP = {
  rateMinutes: 1,
  localIntervalMs: 5_000,
  timeoutSeconds: 60,
} as const;
