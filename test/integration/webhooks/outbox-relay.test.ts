/**
 * Crash-safe delivery: a pending delivery written to the table reaches the delivery queue's consumer
 * even if the process dies between the write and the enqueue. The local pipeline (infra/local/delivery/pipeline.ts:
 * stream relay, sweep, queue with its SQS front) runs against the integration run's DynamoDB Local, with the
 * real relay and sweep handlers sending through the real SQS client, and a stub consumer that finishes the
 * deliveries it receives (as the real one does on success).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { CreateTableCommand, DeleteTableCommand, DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent } from 'aws-lambda';
import { createHandler as createRelayHandler } from '../../../functions/outbox-relay';
import { createHandler as createSweepHandler } from '../../../functions/outbox-sweep';
import { type DeliveryPipeline, startDeliveryPipeline } from '../../../infra/local/delivery/pipeline';
import { DELIVERY_QUEUE } from '../../../infra/shared/webhook-delivery';
import { newId } from '../../../lib/domain/ids';
import type { WebhookDelivery } from '../../../lib/domain/webhooks';
import { putNewDelivery } from '../../../lib/store/deliveries';
import { documentClient, dynamoClient, tableName } from '../../../lib/store/dynamo';
import { keys } from '../../../lib/store/keys';
import * as outbox from '../../../lib/store/outbox';
import { ensureTable, STREAM_VIEW_TYPE } from '../../../lib/store/table';
import type { DeliveryQueue } from '../../../lib/webhooks/queue';
import { sqsDeliveryQueue } from '../../../lib/webhooks/sqs-queue';
import { freePort } from '../../support/ports';

const pendingDelivery = (createdAt = new Date().toISOString()): WebhookDelivery => ({
  id: newId.webhookDelivery(),
  eventId: newId.partnerEvent(),
  endpointId: newId.webhookEndpoint(),
  partnerId: newId.partner(),
  event: 'transaction_succeeded',
  svcTxId: newId.svcTx(),
  payload: '{"event":"transaction_succeeded"}',
  status: 'pending',
  attempts: 0,
  lastHttpStatus: null,
  lastError: null,
  createdAt,
  updatedAt: createdAt,
});

/** The write the processor webhook makes: the delivery's item inside a TransactWriteItems. */
const writeDelivery = (delivery: WebhookDelivery) => documentClient.send(new TransactWriteCommand({ TransactItems: [putNewDelivery(delivery)] }));

/** What the real consumer does on success: the delivery is finished and leaves the outbox. */
const finishDelivery = (deliveryId: string) =>
  documentClient.send(
    new UpdateCommand({
      TableName: tableName,
      Key: keys.webhookDelivery(deliveryId),
      UpdateExpression: 'SET #status = :succeeded, attempts = attempts + :one REMOVE gsi7pk, gsi7sk',
      ConditionExpression: '#status = :pending',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':succeeded': 'succeeded', ':pending': 'pending', ':one': 1 },
    }),
  );

describe('crash-safe delivery through the outbox', () => {
  /** Deliveries of this file (the table is shared: other files' deliveries reach this consumer too, and are ignored). */
  const ours = new Set<string>();
  const receipts: Array<{ deliveryId: string; at: number }> = [];
  const receiptsOf = (deliveryId: string) => receipts.filter((receipt) => receipt.deliveryId === deliveryId);
  /** Enqueues for these deliveries fail (the relay's queue is down for them) until the set is cleared. */
  const enqueueFailsFor = new Set<string>();
  /** Messages the relay and the sweep sent, and enqueues that failed, by delivery. */
  const sent = new Map<string, number>();
  const refused = new Map<string, number>();
  const add = (counts: Map<string, number>, deliveryId: string) => counts.set(deliveryId, (counts.get(deliveryId) ?? 0) + 1);
  let pipeline: DeliveryPipeline | undefined;
  let client: SQSClient;
  let writtenBeforeStart: WebhookDelivery;

  const consumer = async (event: SQSEvent) => {
    for (const record of event.Records) {
      const { deliveryId } = JSON.parse(record.body) as { deliveryId: string };
      if (!ours.has(deliveryId)) continue;
      receipts.push({ deliveryId, at: Date.now() });
      await finishDelivery(deliveryId).catch(() => undefined);
    }
    return { batchItemFailures: [] };
  };

  const waitForReceipt = async (deliveryId: string, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const receipt = receiptsOf(deliveryId)[0];
      if (receipt !== undefined) return receipt;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`delivery ${deliveryId} not received within ${timeoutMs} ms`);
  };

  beforeAll(async () => {
    // Arrange: the process died after the write: the delivery is in the table, nothing enqueued it
    writtenBeforeStart = pendingDelivery();
    ours.add(writtenBeforeStart.id);
    await writeDelivery(writtenBeforeStart);

    // Act: the pipeline starts fresh (its queue empty), with the service's relay and sweep sending through SQS
    const queuePort = await freePort();
    const queueUrl = `http://127.0.0.1:${queuePort}/000000000000/${DELIVERY_QUEUE.name}`;
    client = new SQSClient({ region: 'local', endpoint: `http://127.0.0.1:${queuePort}`, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const sqs = sqsDeliveryQueue(client, queueUrl);
    const queue: DeliveryQueue = {
      send: async (message, delaySeconds) => {
        if ('deliveryId' in message && enqueueFailsFor.has(message.deliveryId)) {
          add(refused, message.deliveryId);
          throw new Error('queue unavailable');
        }
        await sqs.send(message, delaySeconds);
        if ('deliveryId' in message) add(sent, message.deliveryId);
      },
    };
    pipeline = await startDeliveryPipeline({
      dynamoEndpoint: process.env.DYNAMODB_ENDPOINT ?? '',
      tableName,
      queuePort,
      consumer,
      relay: createRelayHandler({ deliveryQueue: queue }),
      sweep: createSweepHandler({ outbox, deliveryQueue: queue }),
      sweepIntervalMs: 250,
    });
  }, 30_000);

  afterAll(async () => {
    await pipeline?.stop();
    client?.destroy();
  });

  /**
   * The receipts of a delivery once a sweep has run after it was delivered (a sweep that sent it again would be
   * the duplicate) and every message sent for it has been received: what it got, and all it will get.
   */
  const receiptsOnceSwept = async (deliveryId: string) => {
    await pipeline?.sweepNow();
    const deadline = Date.now() + 5_000;
    while (receiptsOf(deliveryId).length < (sent.get(deliveryId) ?? 0)) {
      if (Date.now() > deadline) throw new Error(`${sent.get(deliveryId)} messages sent for ${deliveryId}, ${receiptsOf(deliveryId).length} received`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return receiptsOf(deliveryId);
  };

  it('delivers a delivery written before the pipeline started (no relay ran) exactly once, without waiting out its relay grace', async () => {
    await waitForReceipt(writtenBeforeStart.id, 5_000);

    // Sweeps after it was delivered send it no more (the stream relay never sees it: it was written before the
    // relay started, and the consumer's update is a MODIFY, which the relay's filter drops)
    await pipeline?.sweepNow();
    expect(await receiptsOnceSwept(writtenBeforeStart.id)).toHaveLength(1);
    expect(sent.get(writtenBeforeStart.id)).toBe(1);
  }, 15_000);

  it('relays a delivery written while it runs through the table’s stream within a second', async () => {
    const delivery = pendingDelivery();
    ours.add(delivery.id);

    const writtenAt = Date.now();
    await writeDelivery(delivery);
    const { at } = await waitForReceipt(delivery.id, 5_000);

    // Its relay time is 2 minutes away, so no sweep sent it: the stream relay did
    expect(at - writtenAt).toBeLessThan(1_000);
    expect(await receiptsOnceSwept(delivery.id)).toHaveLength(1);
    expect(sent.get(delivery.id)).toBe(1);
  }, 15_000);

  it('retries a stream record whose enqueue failed, until it is enqueued', async () => {
    const delivery = pendingDelivery();
    ours.add(delivery.id);
    enqueueFailsFor.add(delivery.id);

    await writeDelivery(delivery);
    // The relay has tried to enqueue it and failed: the message that arrives later comes from its retry (not from
    // the sweep: the delivery's relay time is 2 minutes away)
    const deadline = Date.now() + 5_000;
    while (!refused.has(delivery.id)) {
      if (Date.now() > deadline) throw new Error(`the relay did not try to enqueue ${delivery.id} within 5 s`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(receiptsOf(delivery.id)).toHaveLength(0);
    enqueueFailsFor.delete(delivery.id);

    await waitForReceipt(delivery.id, 5_000);
    expect(await receiptsOnceSwept(delivery.id)).toHaveLength(1);
    expect(sent.get(delivery.id)).toBe(1);
  }, 15_000);

  it('leaves the dead-letter list empty when every message was handled', () => {
    expect(pipeline?.queue.deadLetters()).toEqual([]);
  });
});

describe('the table’s stream', () => {
  it('is turned on (new images) by ensureTable for a table that exists without one', async () => {
    const name = `no-stream-${randomUUID().slice(0, 8)}`;
    await dynamoClient.send(
      new CreateTableCommand({
        TableName: name,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
      }),
    );
    try {
      expect(await ensureTable(dynamoClient, name)).toBe('existed');

      const { Table } = await dynamoClient.send(new DescribeTableCommand({ TableName: name }));
      expect(Table?.StreamSpecification).toEqual({ StreamEnabled: true, StreamViewType: STREAM_VIEW_TYPE });
      expect(Table?.LatestStreamArn).toBeDefined();
    } finally {
      await dynamoClient.send(new DeleteTableCommand({ TableName: name }));
    }
  }, 30_000);

  it('is on for the service’s table', async () => {
    const { Table } = await dynamoClient.send(new DescribeTableCommand({ TableName: tableName }));

    expect(Table?.StreamSpecification).toEqual({ StreamEnabled: true, StreamViewType: 'NEW_IMAGE' });
  });
});
