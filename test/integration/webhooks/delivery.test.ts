/**
 * The delivery consumer against DynamoDB Local and a real HTTP receiver on 127.0.0.1: the handler is called
 * directly with SQS-shaped events naming deliveries written as the processor webhook writes them
 * (`putNewDelivery`). A fake queue records the retries the consumer schedules; the test feeds them back, moving
 * its clock by their delay, as SQS would.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent } from 'aws-lambda';
import { Webhook } from 'standardwebhooks';
import { createHandler } from '../../../functions/webhook-delivery';
import { webhookDeliveryDeps } from '../../../lib/composition';
import { newId } from '../../../lib/domain/ids';
import type { WebhookDelivery } from '../../../lib/domain/webhooks';
import { claimAttempt, getDelivery, OUTBOX_GRACE_MS, putNewDelivery } from '../../../lib/store/deliveries';
import { documentClient, tableName } from '../../../lib/store/dynamo';
import { keys } from '../../../lib/store/keys';
import type { WebhookDeliveryDeps } from '../../../lib/use-cases/webhook-deliveries';
import { createHttpSender } from '../../../lib/webhooks/http-sender';
import type { DeliveryMessage, QueueMessage, WakeMessage } from '../../../lib/webhooks/queue';
import { type PartnerCredentials, TestApi } from '../../support/api';
import { legacyOutboxItem, newSvcTxId, pendingDelivery } from '../../support/deliveries';
import { lambdaContext } from '../../support/events';
import { WebhookReceiver } from '../../support/webhook-receiver';

let api: TestApi;
let receiver: WebhookReceiver;
let partner: PartnerCredentials;
let endpoint: { id: string; secret: string };

beforeAll(async () => {
  api = await TestApi.start();
  receiver = await WebhookReceiver.start();
  partner = await api.createPartner();
  endpoint = await createEndpoint(receiver.url());
});
afterAll(async () => {
  await receiver.close();
  await api.close();
});

async function createEndpoint(url: string): Promise<{ id: string; secret: string }> {
  const created = await api.admin('POST', `/admin/partners/${partner.partnerId}/webhook-endpoints`, {
    name: 'Orders',
    url,
    events: ['transaction_succeeded', 'transaction_refunded'],
  });
  if (created.status !== 201) throw new Error(`endpoint not created: ${JSON.stringify(created.body)}`);
  return { id: created.body.id, secret: created.body.secret };
}

/** A pending delivery, written as the processor webhook writes one (inside its transaction). */
async function newDelivery(endpointId = endpoint.id): Promise<WebhookDelivery> {
  const svcTxId = newSvcTxId();
  const delivery = pendingDelivery({
    endpointId,
    partnerId: partner.partnerId,
    svcTxId,
    payload: JSON.stringify({
      event: 'transaction_succeeded',
      svc_tx_id: svcTxId,
      partner_id: partner.partnerId,
      client_id: 'merchant-1',
      partner_reference: `order-${randomUUID()}`,
      status: 'succeeded',
      amount: 12.34,
      currency: 'USD',
      meta: { cart: 'ünïcödé 🛒' },
    }),
  });
  await documentClient.send(new TransactWriteCommand({ TransactItems: [putNewDelivery(delivery)] }));
  return delivery;
}

function sqsEvent(...bodies: string[]): SQSEvent {
  return {
    Records: bodies.map((body) => ({
      messageId: randomUUID(),
      receiptHandle: randomUUID(),
      body,
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: String(Date.now()),
        SenderId: 'test',
        ApproximateFirstReceiveTimestamp: String(Date.now()),
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:local:000000000000:partner-webhooks',
      awsRegion: 'local',
    })),
  };
}

const message = (deliveryId: string) => JSON.stringify({ deliveryId });

/** The consumer over a recording queue, a clock the test moves, and a sender with an injectable timeout. */
function consumer(options: { timeoutMs?: number; queue?: WebhookDeliveryDeps['queue']; retryBaseMs?: number } = {}) {
  const clock = { now: Date.now() };
  // Delivery messages (retries) in `sent`; the wake messages breaker changes send, apart
  const sent: Array<{ message: DeliveryMessage; delaySeconds: number }> = [];
  const wakes: Array<{ message: WakeMessage; delaySeconds: number }> = [];
  const deps: WebhookDeliveryDeps = {
    ...webhookDeliveryDeps,
    queue: options.queue ?? {
      send: async (queued: QueueMessage, delaySeconds) => void ('deliveryId' in queued ? sent.push({ message: queued, delaySeconds }) : wakes.push({ message: queued, delaySeconds })),
    },
    send: createHttpSender({ policy: { allowInsecure: true }, timeoutMs: options.timeoutMs ?? 10_000 }),
    retryBaseMs: options.retryBaseMs ?? 1000,
    now: () => clock.now,
    random: () => 0.5,
    // The test's clock moves instead: a wait for the sub-second rest of a backoff advances it.
    sleep: async (ms) => void (clock.now += ms),
  };
  const handle = createHandler(deps);
  return { clock, sent, deps, consume: (...bodies: string[]) => handle(sqsEvent(...bodies), lambdaContext()) };
}

async function storedItem(deliveryId: string): Promise<Record<string, unknown>> {
  const { Item } = await documentClient.send(new GetCommand({ TableName: tableName, Key: keys.webhookDelivery(deliveryId), ConsistentRead: true }));
  if (Item === undefined) throw new Error(`no delivery ${deliveryId}`);
  return Item;
}

/** The delivery as the admin list shows it. */
async function listedDelivery(deliveryId: string): Promise<Record<string, unknown> | undefined> {
  const listed = await api.admin('GET', `/admin/partners/${partner.partnerId}/webhook-deliveries?limit=200`);
  return (listed.body.items as Array<Record<string, unknown>>).find((item) => item.id === deliveryId);
}

async function auditOf(deliveryId: string): Promise<Array<Record<string, any>>> {
  const listed = await api.admin('GET', `/admin/audit-events?partner_id=${partner.partnerId}&limit=200`);
  return (listed.body.items as Array<Record<string, any>>).filter((event) => event.resource_id === deliveryId).reverse();
}

const requestsFor = (eventId: string) => receiver.requests.filter((request) => request.headers['webhook-id'] === eventId);

describe('a delivery answered 2xx', () => {
  it('posts the exact body, signed both ways, then records succeeded with an audit event and leaves the outbox', async () => {
    // Arrange
    const delivery = await newDelivery();
    const { consume, sent } = consumer();

    // Act
    const response = await consume(message(delivery.id));

    // Assert: what the partner received
    expect(response).toEqual({ batchItemFailures: [] });
    const [received, ...others] = requestsFor(delivery.eventId);
    expect(others).toEqual([]);
    expect(received?.method).toBe('POST');
    expect(received?.body).toBe(delivery.payload);
    const headers = received?.headers ?? {};
    expect(headers['content-type']).toBe('application/json');
    expect(headers['x-svc-event-id']).toBe(delivery.eventId);
    expect(headers['x-svc-signature']).toBe(createHmac('sha256', endpoint.secret).update(received?.body ?? '').digest('hex'));
    expect(headers['x-svc-timestamp']).toBe(headers['webhook-timestamp']);
    expect(new Webhook(endpoint.secret).verify(received?.body ?? '', headers as Record<string, string>)).toEqual(JSON.parse(delivery.payload));

    // Assert: what the service recorded
    expect(await listedDelivery(delivery.id)).toMatchObject({
      event_id: delivery.eventId,
      endpoint_id: endpoint.id,
      event: 'transaction_succeeded',
      svc_tx_id: delivery.svcTxId,
      status: 'succeeded',
      attempts: 1,
      last_http_status: 200,
      last_error: null,
    });
    expect(await auditOf(delivery.id)).toEqual([
      expect.objectContaining({
        type: 'webhook_delivery.succeeded',
        partner_id: partner.partnerId,
        resource_type: 'webhook_delivery',
        details: expect.objectContaining({ event_id: delivery.eventId, attempt: 1, http_status: 200 }),
      }),
    ]);
    const item = await storedItem(delivery.id);
    expect(item.gsi7pk).toBeUndefined();
    expect(item.gsi7sk).toBeUndefined();
    expect(sent).toEqual([]);
  });

  it('acknowledges a message for a finished or unknown delivery without sending anything', async () => {
    const delivery = await newDelivery();
    const { consume } = consumer();
    await consume(message(delivery.id));

    const response = await consume(message(delivery.id), message(newId.webhookDelivery()));

    expect(response).toEqual({ batchItemFailures: [] });
    expect(requestsFor(delivery.eventId)).toHaveLength(1);
  });
});

describe('a delivery that keeps failing', () => {
  it('gets exactly 3 attempts, ×1 then ×4 the backoff base apart, then is failed with an audit row for each attempt', async () => {
    // Arrange
    const delivery = await newDelivery();
    receiver.answer({ status: 500 }, { status: 500 }, { status: 500 });
    const { consume, sent, clock } = consumer();

    // Act: the first attempt, then each scheduled retry fed back once its delay has passed
    await consume(message(delivery.id));
    const afterFirst = await storedItem(delivery.id);
    clock.now += (sent[0]?.delaySeconds ?? 0) * 1000;
    await consume(JSON.stringify(sent[0]?.message));
    clock.now += (sent[1]?.delaySeconds ?? 0) * 1000;
    await consume(JSON.stringify(sent[1]?.message));
    // A late duplicate of the last message changes nothing.
    clock.now += 60_000;
    await consume(message(delivery.id));

    // Assert
    expect(sent).toEqual([
      { message: { deliveryId: delivery.id, partnerId: partner.partnerId }, delaySeconds: 1 },
      { message: { deliveryId: delivery.id, partnerId: partner.partnerId }, delaySeconds: 4 },
    ]);
    expect(afterFirst).toMatchObject({ status: 'pending', attempts: 1, lastHttpStatus: 500, gsi7pk: keys.outboxIndex(delivery.id, delivery.createdAt).gsi7pk });
    // The outbox entry waits past the retry's due time, so the relay's sweep does not send it early.
    expect(String(afterFirst.gsi7sk) > new Date(Number(afterFirst.nextAttemptAt)).toISOString()).toBe(true);
    const requests = requestsFor(delivery.eventId);
    expect(requests).toHaveLength(3);
    expect(new Set(requests.map((request) => request.body))).toEqual(new Set([delivery.payload]));
    expect(await listedDelivery(delivery.id)).toMatchObject({ status: 'failed', attempts: 3, last_http_status: 500, last_error: expect.stringContaining('500') });
    expect((await auditOf(delivery.id)).map((event) => [event.type, event.details.attempt])).toEqual([
      ['webhook_delivery.attempt_failed', 1],
      ['webhook_delivery.attempt_failed', 2],
      ['webhook_delivery.failed', 3],
    ]);
    expect((await storedItem(delivery.id)).gsi7pk).toBeUndefined();
  });

  it('does not attempt again when a retry message arrives more than the queue could be early (its backoff has not passed)', async () => {
    const delivery = await newDelivery();
    receiver.answer({ status: 503 });
    const { consume, sent, clock } = consumer({ retryBaseMs: 5_000 });
    await consume(message(delivery.id));

    clock.now += 100; // the retry is due after 5 s
    await consume(JSON.stringify(sent[0]?.message));

    expect(requestsFor(delivery.eventId)).toHaveLength(1);
    expect(await storedItem(delivery.id)).toMatchObject({ status: 'pending', attempts: 1 });
  });

  it('keeps the backoff exact below a second: the queue delays whole seconds (rounded down), the consumer waits the rest', async () => {
    // Arrange: a base of 1.5 s; the first retry is due 1500 ms after the failure
    const delivery = await newDelivery();
    receiver.answer({ status: 503 });
    const { consume, sent, clock } = consumer({ retryBaseMs: 1_500 });
    const failedAt = clock.now;
    await consume(message(delivery.id));

    // Act: the queue hands the message over after its whole-second delay
    clock.now = failedAt + (sent[0]?.delaySeconds ?? 0) * 1000;
    receiver.answer({ status: 200 });
    await consume(JSON.stringify(sent[0]?.message));

    // Assert: delayed 1 s by the queue, the other 0.5 s waited out here, then attempted
    expect(sent[0]?.delaySeconds).toBe(1);
    expect(requestsFor(delivery.eventId)).toHaveLength(2);
    expect(clock.now - failedAt).toBe(1_500);
  });

  it('counts a 301 as a failure and never follows the redirect', async () => {
    const delivery = await newDelivery();
    receiver.answer({ status: 301, headers: { location: receiver.url('/moved') } });
    const { consume } = consumer();

    await consume(message(delivery.id));

    expect(receiver.requests.filter((request) => request.path === '/moved')).toEqual([]);
    expect(requestsFor(delivery.eventId)).toHaveLength(1);
    expect(await storedItem(delivery.id)).toMatchObject({
      status: 'pending',
      attempts: 1,
      lastHttpStatus: 301,
      lastError: expect.stringContaining('redirects are not followed'),
    });
  });

  it('cuts off a receiver that does not answer within the timeout and counts it as a failed attempt', async () => {
    // An endpoint of its own: the timeout opens its breaker, which would hold back the other tests' deliveries.
    const hanging = await createEndpoint(receiver.url('/hangs'));
    const delivery = await newDelivery(hanging.id);
    receiver.answer({ hang: true });
    const { consume, sent } = consumer({ timeoutMs: 300 });

    const started = Date.now();
    await consume(message(delivery.id));

    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await storedItem(delivery.id)).toMatchObject({
      status: 'pending',
      attempts: 1,
      lastHttpStatus: null,
      lastError: 'No response within 0.3 s',
    });
    expect(sent).toHaveLength(1);
  });

  it('fails a delivery whose endpoint was deleted, without sending it', async () => {
    const doomed = await createEndpoint(receiver.url('/doomed'));
    const delivery = await newDelivery(doomed.id);
    expect((await api.admin('DELETE', `/admin/partners/${partner.partnerId}/webhook-endpoints/${doomed.id}`)).status).toBe(204);
    const { consume } = consumer();

    await consume(message(delivery.id));

    expect(receiver.requests.filter((request) => request.path === '/doomed')).toEqual([]);
    expect(await listedDelivery(delivery.id)).toMatchObject({ status: 'failed', attempts: 0, last_error: 'The webhook endpoint was deleted' });
    expect((await auditOf(delivery.id)).map((event) => event.type)).toEqual(['webhook_delivery.failed']);
  });
});

describe('duplicate messages', () => {
  it('make one attempt when two arrive at once', async () => {
    const delivery = await newDelivery();
    const { consume } = consumer();

    await Promise.all([consume(message(delivery.id)), consume(message(delivery.id))]);

    expect(requestsFor(delivery.eventId)).toHaveLength(1);
    expect(await storedItem(delivery.id)).toMatchObject({ status: 'succeeded', attempts: 1 });
  });

  it('make no second attempt while the first is still waiting for the partner (the attempt lease)', async () => {
    // Arrange: the receiver holds its answer until released
    const delivery = await newDelivery();
    let release = () => {};
    receiver.answer({ status: 200, release: new Promise<void>((resolve) => (release = resolve)) });
    const { consume, clock } = consumer();
    const first = consume(message(delivery.id));
    await receiver.waitForRequests(receiver.requests.length + 1);

    // Act: a duplicate arrives a little later, while the first attempt runs
    clock.now += 5_000;
    const duplicate = await consume(message(delivery.id));
    release();
    await first;

    // Assert
    expect(duplicate).toEqual({ batchItemFailures: [] });
    expect(requestsFor(delivery.eventId)).toHaveLength(1);
    expect(await storedItem(delivery.id)).toMatchObject({ status: 'succeeded', attempts: 1 });
  });
});

describe('messages that cannot be processed', () => {
  it('are reported as batch item failures (to be received again, then dead-lettered) while the rest of the batch is done', async () => {
    const delivery = await newDelivery();
    const { deps } = consumer();
    const event = sqsEvent('not json', JSON.stringify({ nothing: 'here' }), message(delivery.id));

    const response = await createHandler(deps)(event, lambdaContext());

    expect(response.batchItemFailures).toEqual([{ itemIdentifier: event.Records[0]?.messageId }, { itemIdentifier: event.Records[1]?.messageId }]);
    expect(await storedItem(delivery.id)).toMatchObject({ status: 'succeeded' });
  });

  it('are reported when the table is unavailable, and the delivery is left as it was', async () => {
    const delivery = await newDelivery();
    const { deps } = consumer();
    const down = new Error('DynamoDB is unavailable');
    const failing: WebhookDeliveryDeps = { ...deps, deliveries: { ...deps.deliveries, getDelivery: async () => Promise.reject(down) } };
    const event = sqsEvent(message(delivery.id));

    const response = await createHandler(failing)(event, lambdaContext());

    expect(response.batchItemFailures).toEqual([{ itemIdentifier: event.Records[0]?.messageId }]);
    expect(requestsFor(delivery.eventId)).toEqual([]);
    expect(await storedItem(delivery.id)).toMatchObject({ status: 'pending', attempts: 0 });
  });

  it('are reported when the retry cannot be enqueued, with the failed attempt already recorded for the outbox sweep', async () => {
    const delivery = await newDelivery();
    receiver.answer({ status: 500 });
    const { consume } = consumer({ queue: { send: async () => Promise.reject(new Error('queue unavailable')) } });

    const response = await consume(message(delivery.id));

    expect(response.batchItemFailures).toHaveLength(1);
    const item = await storedItem(delivery.id);
    expect(item).toMatchObject({ status: 'pending', attempts: 1, lastHttpStatus: 500, gsi7pk: keys.outboxIndex(delivery.id, delivery.createdAt).gsi7pk });
    expect(String(item.gsi7sk) > new Date(Number(item.nextAttemptAt)).toISOString()).toBe(true);
  });
});

describe('the outbox entry of a delivery being attempted', () => {
  /** Starts an attempt of `deliveryId` at the consumer's clock `at`, held by the receiver: the item while it runs, and a release that ends it. */
  async function whileAttempted(deliveryId: string, at?: number) {
    let release = () => {};
    receiver.answer({ status: 200, release: new Promise<void>((resolve) => (release = resolve)) });
    const { consume, clock } = consumer();
    if (at !== undefined) clock.now = at;
    const attempt = consume(message(deliveryId));
    await receiver.waitForRequests(receiver.requests.length + 1);
    const during = await storedItem(deliveryId);
    const finish = async () => {
      release();
      await attempt;
    };
    return { during, finish };
  }

  it('stays where it is when the attempt is claimed within the grace after its creation (no index write)', async () => {
    const delivery = await newDelivery();
    const before = await storedItem(delivery.id);

    const { during, finish } = await whileAttempted(delivery.id);
    await finish();

    expect(during).toMatchObject({ attempts: 1, gsi7pk: before.gsi7pk, gsi7sk: before.gsi7sk });
    // The key still lies a grace past the lease, so the sweep cannot find the delivery due while the attempt runs
    expect(Date.parse(keys.outboxEntry(String(during.gsi7sk)).relayAfter)).toBeGreaterThanOrEqual(Number(during.leaseUntil) + OUTBOX_GRACE_MS);
  });

  it('is claimed with the key left where it is only while the key is still as read: a park that moved it meanwhile fails the claim', async () => {
    const delivery = await newDelivery();
    const read = (await getDelivery(delivery.id))!;
    const now = Date.parse(delivery.createdAt) + 1_000;
    // A park from a duplicate message moves the key a day ahead between the read and the claim
    const dayAhead = keys.outboxIndex(delivery.id, new Date(now + 25 * 3_600_000).toISOString());
    await documentClient.send(new PutCommand({ TableName: tableName, Item: { ...(await storedItem(delivery.id)), ...dayAhead } }));

    expect(await claimAttempt(read, { now, dueBy: now, leaseUntil: now + 60_000 })).toBe(false);
    expect(await storedItem(delivery.id)).toMatchObject({ attempts: 0, ...dayAhead });
  });

  it('moves past the lease when the lease would outlive the relay time (a claim late after the creation)', async () => {
    const delivery = await newDelivery();
    const before = await storedItem(delivery.id);

    // Claimed 100 s after the creation: the 60 s lease ends past the relay time, 2 minutes after it
    const { during, finish } = await whileAttempted(delivery.id, Date.parse(delivery.createdAt) + 100_000);
    await finish();

    expect(during).toMatchObject({ attempts: 1, gsi7pk: before.gsi7pk });
    expect(during.gsi7sk).toBe(keys.outboxIndex(delivery.id, new Date(Number(during.leaseUntil) + OUTBOX_GRACE_MS).toISOString()).gsi7sk);
    expect(String(during.gsi7sk) > String(before.gsi7sk)).toBe(true);
  });

  it('moves back to just past the lease from far ahead (a woken parked delivery’s), so an attempt cut short is relayed within minutes', async () => {
    const delivery = await newDelivery();
    const farAhead = keys.outboxIndex(delivery.id, new Date(Date.parse(delivery.createdAt) + 25 * 3_600_000).toISOString());
    await documentClient.send(new PutCommand({ TableName: tableName, Item: { ...(await storedItem(delivery.id)), ...farAhead } }));

    const { during, finish } = await whileAttempted(delivery.id);
    await finish();

    expect(during).toMatchObject(keys.outboxIndex(delivery.id, new Date(Number(during.leaseUntil) + OUTBOX_GRACE_MS).toISOString()));
  });

  it('of a delivery written before the shards (in gsi2 OUTBOX) stays there through a claim in the grace, and leaves both outboxes when it succeeds', async () => {
    const delivery = await newDelivery();
    await documentClient.send(new PutCommand({ TableName: tableName, Item: legacyOutboxItem(await storedItem(delivery.id)) }));

    const { during, finish } = await whileAttempted(delivery.id);
    await finish();

    expect(during).toMatchObject({ attempts: 1, gsi2pk: keys.legacyOutbox });
    expect(during.gsi7pk).toBeUndefined();
    const item = await storedItem(delivery.id);
    expect(item).toMatchObject({ status: 'succeeded', attempts: 1 });
    for (const key of ['gsi7pk', 'gsi7sk', 'gsi2pk', 'gsi2sk']) expect(item[key]).toBeUndefined();
  });

  it('of a delivery written before the shards moves into its shard when the claim must move it', async () => {
    const delivery = await newDelivery();
    await documentClient.send(new PutCommand({ TableName: tableName, Item: legacyOutboxItem(await storedItem(delivery.id)) }));

    const { during, finish } = await whileAttempted(delivery.id, Date.parse(delivery.createdAt) + 100_000);
    await finish();

    expect(during).toMatchObject(keys.outboxIndex(delivery.id, new Date(Number(during.leaseUntil) + OUTBOX_GRACE_MS).toISOString()));
    expect(during.gsi2pk).toBeUndefined();
    expect(during.gsi2sk).toBeUndefined();
  });
});

describe('resend', () => {
  it('sends a resend of a delivery still waiting out its backoff at once, not after the backoff of the original', async () => {
    // Arrange: a delivery whose first attempt failed; its retry is due in about 5 minutes
    const original = await newDelivery();
    receiver.answer({ status: 500 });
    const { consume } = consumer({ retryBaseMs: 300_000 });
    await consume(message(original.id));

    // Act
    receiver.answer({ status: 200 });
    const resent = await api.admin('POST', `/admin/webhook-deliveries/${original.id}/resend`);
    await consume(message(resent.body.id));

    // Assert
    expect(await storedItem(resent.body.id)).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(requestsFor(original.eventId)).toHaveLength(2);
  });

  it('makes a new pending delivery of the same event (same event id, same body) that is then delivered', async () => {
    // Arrange: a delivery that failed three times
    const original = await newDelivery();
    receiver.answer({ status: 500 }, { status: 500 }, { status: 500 });
    const { consume, sent, clock } = consumer();
    await consume(message(original.id));
    for (const retry of [0, 1]) {
      clock.now += (sent[retry]?.delaySeconds ?? 0) * 1000;
      await consume(JSON.stringify(sent[retry]?.message));
    }
    expect((await storedItem(original.id)).status).toBe('failed');

    // Act
    const resent = await api.admin('POST', `/admin/webhook-deliveries/${original.id}/resend`);
    await consume(message(resent.body.id));

    // Assert
    expect(resent.status).toBe(202);
    expect(resent.body).toEqual({
      id: expect.stringMatching(/^dlv_/),
      event_id: original.eventId,
      endpoint_id: endpoint.id,
      event: 'transaction_succeeded',
      svc_tx_id: original.svcTxId,
      status: 'pending',
      attempts: 0,
      last_http_status: null,
      last_error: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(resent.body.id).not.toBe(original.id);
    const requests = requestsFor(original.eventId);
    expect(requests).toHaveLength(4);
    expect(requests[3]?.body).toBe(original.payload);
    expect(requests[3]?.headers['x-svc-event-id']).toBe(original.eventId);
    expect(await listedDelivery(resent.body.id)).toMatchObject({ status: 'succeeded', attempts: 1, event_id: original.eventId });
    expect(await listedDelivery(original.id)).toMatchObject({ status: 'failed', attempts: 3 });
    expect((await auditOf(resent.body.id)).map((event) => event.type)).toEqual(['webhook_delivery.resent', 'webhook_delivery.succeeded']);
    expect((await auditOf(resent.body.id))[0]?.details.resent_from).toBe(original.id);
  });
});
