/**
 * The local queue's SQS front: the real SQS client (the service's own adapter) sends to it as to SQS, and the
 * message reaches the consumer with its delay. The front answers the MD5 of the body the SDK checks, and SQS's
 * JSON-protocol errors.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { QueueDoesNotExist, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { LocalDeliveryQueue } from '../../../infra/local/delivery/queue';
import { type SqsFront, startSqsFront } from '../../../infra/local/delivery/sqs-front';
import { sqsDeliveryQueue } from '../../../lib/webhooks/sqs-queue';

describe('the local queue front (SQS JSON protocol)', () => {
  const received: Array<{ record: SQSRecord; at: number }> = [];
  let queue: LocalDeliveryQueue;
  let front: SqsFront;
  let client: SQSClient;

  beforeAll(async () => {
    queue = new LocalDeliveryQueue({
      name: 'partner-webhooks',
      visibilityTimeoutSeconds: 180,
      maxReceiveCount: 5,
      batchSize: 10,
      consumer: async (event) => {
        for (const record of event.Records) received.push({ record, at: Date.now() });
        return { batchItemFailures: [] };
      },
      consumerName: 'webhook-delivery',
      consumerTimeoutSeconds: 30,
    });
    front = await startSqsFront({ port: 0, queue, queueName: 'partner-webhooks' });
    // What lib/webhooks/sqs-queue.ts builds locally: the endpoint is the queue URL's origin
    client = new SQSClient({ region: 'local', endpoint: new URL(front.queueUrl).origin, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  });

  afterAll(async () => {
    client.destroy();
    await queue.stop();
    await front.close();
  });

  const waitForBody = async (body: string, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const found = received.find((entry) => entry.record.body === body);
      if (found !== undefined) return found;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`message ${body} not received within ${timeoutMs} ms`);
  };

  it('accepts the service adapter’s SendMessage (the SDK checks the MD5) and hands the message to the consumer', async () => {
    const adapter = sqsDeliveryQueue(client, front.queueUrl);

    await adapter.send({ deliveryId: 'dlv_roundtrip1', partnerId: 'ptn_roundtrip' }, 0);
    const { record } = await waitForBody('{"deliveryId":"dlv_roundtrip1"}', 2_000);

    expect(record.eventSource).toBe('aws:sqs');
    expect(record.attributes.MessageGroupId).toBe('ptn_roundtrip');
    expect(record.md5OfBody).toBe(createHash('md5').update('{"deliveryId":"dlv_roundtrip1"}').digest('hex'));
  });

  it('answers the MD5 of the body’s UTF-8 bytes and a message id, in SQS’s JSON protocol', async () => {
    const body = '{"note":"Zürich → 東京"}';

    const response = await fetch(`${new URL(front.queueUrl).origin}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.SendMessage' },
      body: JSON.stringify({ QueueUrl: front.queueUrl, MessageBody: body }),
    });

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/x-amz-json-1.0');
    expect(await response.json()).toEqual({ MessageId: expect.stringMatching(/^[0-9a-f-]{36}$/), MD5OfMessageBody: createHash('md5').update(Buffer.from(body, 'utf8')).digest('hex') });
    await waitForBody(body, 2_000);
  });

  it('honours DelaySeconds sent through the SDK', async () => {
    const sentAt = Date.now();

    await client.send(new SendMessageCommand({ QueueUrl: front.queueUrl, MessageBody: 'delayed by one second', DelaySeconds: 1 }));
    const { at } = await waitForBody('delayed by one second', 3_000);

    expect(at - sentAt).toBeGreaterThanOrEqual(1_000);
  });

  it('answers SQS errors the SDK understands: an unknown queue, a delay out of range, a message group id SQS refuses', async () => {
    const unknownQueue = front.queueUrl.replace(/partner-webhooks$/, 'no-such-queue');

    await expect(client.send(new SendMessageCommand({ QueueUrl: unknownQueue, MessageBody: 'x' }))).rejects.toBeInstanceOf(QueueDoesNotExist);
    await expect(client.send(new SendMessageCommand({ QueueUrl: front.queueUrl, MessageBody: 'x', DelaySeconds: 901 }))).rejects.toMatchObject({
      name: 'InvalidParameterValue',
      $metadata: { httpStatusCode: 400 },
    });
    for (const MessageGroupId of ['', 'with space', 'é', 'x'.repeat(129)]) {
      await expect(client.send(new SendMessageCommand({ QueueUrl: front.queueUrl, MessageBody: 'x', MessageGroupId }))).rejects.toMatchObject({
        name: 'InvalidParameterValue',
        $metadata: { httpStatusCode: 400 },
      });
    }
    expect(received.some((entry) => entry.record.body === 'x')).toBe(false);
  });

  it('serves the dead-letter list for inspection', async () => {
    const response = await fetch(`${new URL(front.queueUrl).origin}/dead-letters`);

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ items: [] });
  });

  it('serves its counts: messages sent since start, in the queue, visible, in flight', async () => {
    const stats = async () => (await fetch(`${new URL(front.queueUrl).origin}/stats`)).json() as Promise<Record<string, number>>;
    const before = await stats();

    await sqsDeliveryQueue(client, front.queueUrl).send({ deliveryId: 'dlv_counted', partnerId: 'ptn_front' }, 900);

    expect(await stats()).toEqual({ sent: (before.sent ?? 0) + 1, depth: (before.depth ?? 0) + 1, visible: before.visible, inFlight: before.inFlight });
  });
});
