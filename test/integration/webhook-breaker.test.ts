/**
 * The delivery consumer's endpoint breaker and its crash safety, against DynamoDB Local and real HTTP endpoints
 * on 127.0.0.1 (decisions.md §8; docs/webhooks.md "Slow endpoints"). The handler is called directly with
 * SQS-shaped events; a fake queue records the messages it sends, and the test's clock moves instead of time.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent } from 'aws-lambda';
import { createHandler } from '../../functions/webhook-delivery';
import { webhookDeliveryDeps } from '../../lib/adapters';
import { cachedEndpoints } from '../../lib/adapters/endpoint-cache';
import * as webhookEndpoints from '../../lib/store/webhook-endpoints';
import { breakerSettings } from '../../lib/domain/endpoint-breaker';
import type { WebhookDelivery } from '../../lib/domain/webhooks';
import { putNewDelivery } from '../../lib/store/deliveries';
import { documentClient, tableName } from '../../lib/store/dynamo';
import { keys } from '../../lib/store/keys';
import { deliverWebhook, type WebhookDeliveryDeps } from '../../lib/use-cases/webhook-deliveries';
import { createHttpSender, type WebhookSender } from '../../lib/webhooks/http-sender';
import type { DeliveryMessage } from '../../lib/webhooks/queue';
import { type PartnerCredentials, TestApi } from '../support/api';
import { newSvcTxId, pendingDelivery } from '../support/deliveries';
import { lambdaContext } from '../support/events';
import { BehavingReceiver } from '../support/reliability-receiver';

const TIMEOUT_MS = 300;
let api: TestApi;
let receiver: BehavingReceiver;
let partner: PartnerCredentials;

beforeAll(async () => {
  api = await TestApi.start();
  receiver = await BehavingReceiver.start({ '/flaky': { hang: true }, '/healthy': { status: 200 } });
  partner = await api.createPartner();
});
afterAll(async () => {
  await receiver.close();
  await api.close();
});

async function createEndpoint(path: string): Promise<string> {
  const created = await api.admin('POST', `/admin/partners/${partner.partnerId}/webhook-endpoints`, { name: path, url: receiver.url(path), events: ['transaction_succeeded'] });
  if (created.status !== 201) throw new Error(`endpoint not created: ${JSON.stringify(created.body)}`);
  return created.body.id as string;
}

async function newDelivery(endpointId: string): Promise<WebhookDelivery> {
  const svcTxId = newSvcTxId();
  const delivery = pendingDelivery({ endpointId, partnerId: partner.partnerId, svcTxId, payload: JSON.stringify({ event: 'transaction_succeeded', svc_tx_id: svcTxId }) });
  await documentClient.send(new TransactWriteCommand({ TransactItems: [putNewDelivery(delivery)] }));
  return delivery;
}

const stored = async (key: { pk: string; sk: string }) =>
  (await documentClient.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }))).Item ?? {};

const sqsEvent = (messages: DeliveryMessage[]): SQSEvent => ({
  Records: messages.map(({ deliveryId, waiting }) => ({
    messageId: randomUUID(),
    receiptHandle: randomUUID(),
    body: JSON.stringify(waiting === undefined ? { deliveryId } : { deliveryId, waiting }),
    attributes: { ApproximateReceiveCount: '1', SentTimestamp: '0', SenderId: 'test', ApproximateFirstReceiveTimestamp: '0', MessageGroupId: partner.partnerId },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:local:000000000000:partner-webhooks',
    awsRegion: 'local',
  })),
});

/** The consumer over a recording queue and the test's clock; `send` defaults to real HTTP with a short timeout. */
function consumer(clock: { now: number }, send?: WebhookSender) {
  const sent: Array<{ message: DeliveryMessage; delaySeconds: number }> = [];
  const reads = new Map<string, number>();
  const deps: WebhookDeliveryDeps = {
    ...webhookDeliveryDeps,
    deliveries: {
      ...webhookDeliveryDeps.deliveries,
      getDelivery: (deliveryId) => {
        reads.set(deliveryId, (reads.get(deliveryId) ?? 0) + 1);
        return webhookDeliveryDeps.deliveries.getDelivery(deliveryId);
      },
    },
    // A cache of its own, as each Lambda container has
    ...cachedEndpoints(webhookEndpoints, webhookEndpoints),
    queue: { send: async (message, delaySeconds) => void sent.push({ message, delaySeconds }) },
    send: send ?? createHttpSender({ policy: { allowInsecure: true }, timeoutMs: TIMEOUT_MS }),
    breakerSettings: breakerSettings(TIMEOUT_MS),
    now: () => clock.now,
    random: () => 0.5,
    sleep: async (ms) => void (clock.now += ms),
  };
  const handle = createHandler(deps);
  return {
    sent,
    deps,
    readsOf: (deliveryId: string) => reads.get(deliveryId) ?? 0,
    consume: (...deliveries: WebhookDelivery[]) => handle(sqsEvent(deliveries.map((delivery) => ({ deliveryId: delivery.id, partnerId: delivery.partnerId }))), lambdaContext()),
    consumeMessages: (...messages: DeliveryMessage[]) => handle(sqsEvent(messages), lambdaContext()),
  };
}

describe('an endpoint that stops answering', () => {
  it('is probed one attempt at a time; its timeout opens the breaker, which defers the rest with their attempts unchanged; an answer closes it', async () => {
    // Arrange: a new endpoint that hangs, three deliveries for it
    const endpointId = await createEndpoint('/flaky');
    const [first, second, third] = [await newDelivery(endpointId), await newDelivery(endpointId), await newDelivery(endpointId)] as [WebhookDelivery, WebhookDelivery, WebhookDelivery];
    const clock = { now: Date.now() };
    const { consume, consumeMessages, readsOf, sent, deps } = consumer(clock);

    // Act: two of them in one batch
    expect(await consume(first, second)).toEqual({ batchItemFailures: [] });

    // Assert: one request (the probe), timed out; the other delivery deferred, not attempted, a message delayed
    expect(receiver.arrivals('/flaky')).toHaveLength(1);
    const [probed, waiting] = (await stored(keys.webhookDelivery(first.id))).attempts === 1 ? [first, second] : [second, first];
    expect(await stored(keys.webhookDelivery(probed.id))).toMatchObject({ status: 'pending', attempts: 1, lastError: `No response within ${TIMEOUT_MS / 1000} s` });
    expect(await stored(keys.webhookDelivery(waiting.id))).toMatchObject({ status: 'pending', attempts: 0 });
    expect(sent.map((entry) => entry.message.deliveryId).sort()).toEqual([first.id, second.id].sort());
    const breaker = (await stored(keys.webhookEndpoint(partner.partnerId, endpointId))).breaker as Record<string, number>;
    expect(breaker).toMatchObject({ answeredAt: 0, cooldownMs: 5_000, probeUntil: 0 });
    const openUntil = Number(breaker.openUntil);
    expect(openUntil).toBeGreaterThanOrEqual(clock.now + 5_000);

    // Act: while open, the third: deferred past the cool-down, nothing sent to the endpoint
    const sentBefore = sent.length;
    await consume(third);
    expect(receiver.arrivals('/flaky')).toHaveLength(1);
    expect(await stored(keys.webhookDelivery(third.id))).toMatchObject({ status: 'pending', attempts: 0 });
    // (its outbox entry parked an hour past the deferral, so the sweep leaves it to the message)
    const parked = await stored(keys.webhookDelivery(third.id));
    const relayAfter = Date.parse(String(parked.gsi2sk).split('#')[0] ?? '');
    expect(relayAfter).toBe(openUntil + 2_500 + 3_600_000 + 30_000);
    expect(sent[sentBefore]).toEqual({
      message: { deliveryId: third.id, partnerId: partner.partnerId, waiting: { endpointId, createdAt: third.createdAt, relayAfter } },
      delaySeconds: Math.ceil((openUntil + 2_500 - clock.now) / 1000),
    });

    // Act: that message comes back while the breaker is still open: deferred again without reading the delivery
    const reads = readsOf(third.id);
    const again = await consumeMessages(sent[sentBefore]?.message as DeliveryMessage);
    expect(again).toEqual({ batchItemFailures: [] });
    expect(readsOf(third.id)).toBe(reads);
    expect(sent.at(-1)?.message).toEqual(sent[sentBefore]?.message);

    // Act: the endpoint recovers; after the cool-down the third goes as the probe
    receiver.behave('/flaky', { status: 200 });
    clock.now = openUntil + 2_500; // when its deferral ends
    expect(await deliverWebhook(deps, { deliveryId: third.id })).toMatchObject({ outcome: 'succeeded', probe: true, breaker: 'recovering' });
    expect(await stored(keys.webhookDelivery(third.id))).toMatchObject({ status: 'succeeded', attempts: 1 });
    // ... not closed yet: an endpoint that timed out needs 3 answered probes in a row
    expect((await stored(keys.webhookEndpoint(partner.partnerId, endpointId))).breaker).toMatchObject({ probesToClose: 2, probeUntil: 0 });

    // Act: the two others, one batch at a time, each the next probe (their retries are due)
    clock.now += 10_000;
    await consume(first);
    expect(await deliverWebhook(deps, { deliveryId: second.id })).toMatchObject({ outcome: 'succeeded', probe: true, breaker: 'closed' });

    // Assert: both delivered; the third answered probe closed the breaker
    expect(await stored(keys.webhookDelivery(first.id))).toMatchObject({ status: 'succeeded' });
    expect(await stored(keys.webhookDelivery(second.id))).toMatchObject({ status: 'succeeded', attempts: waiting === second ? 1 : 2 });
    expect((await stored(keys.webhookEndpoint(partner.partnerId, endpointId))).breaker).toEqual({
      answeredAt: clock.now, openUntil: 0, cooldownMs: 0, probeStartedAt: 0, probeUntil: 0, probesToClose: 0,
    });
    const listed = ((await api.admin('GET', `/admin/partners/${partner.partnerId}/webhook-endpoints`)).body.items as Array<Record<string, any>>).find((item) => item.id === endpointId);
    expect(listed?.circuit).toEqual({ state: 'closed', open_until: null });

    // Assert: closed, new deliveries go at once, in one batch, side by side
    const [fourth, fifth] = [await newDelivery(endpointId), await newDelivery(endpointId)];
    await consume(fourth as WebhookDelivery, fifth as WebhookDelivery);
    expect(receiver.arrivals('/flaky')).toHaveLength(6);
  });

  it('opens again when the endpoint times out; an admin resend ends the cool-down, so the resent delivery goes at once as the probe', async () => {
    // Arrange: an endpoint that has answered (closed), then stops answering
    const endpointId = await createEndpoint('/dies');
    receiver.behave('/dies', { status: 200 });
    const clock = { now: Date.now() };
    const { consume } = consumer(clock);
    await consume(await newDelivery(endpointId));
    receiver.behave('/dies', { hang: true });
    const doomed = await newDelivery(endpointId);
    clock.now += 1_000;
    await consume(doomed);
    const listed = async () => ((await api.admin('GET', `/admin/partners/${partner.partnerId}/webhook-endpoints`)).body.items as Array<Record<string, any>>).find((item) => item.id === endpointId);
    const circuit = (await listed())?.circuit as { state: string; open_until: string };
    expect(circuit.state).toBe('open');

    // Act: the partner fixes the endpoint; the admin resends the delivery, long before the cool-down ends
    receiver.behave('/dies', { status: 200 });
    const resent = await api.admin('POST', `/admin/webhook-deliveries/${doomed.id}/resend`);
    expect(resent.status).toBe(202);
    expect((await listed())?.circuit).toEqual({ state: 'probing', open_until: null });
    const resentDelivery = { ...doomed, id: resent.body.id as string, attempts: 0, createdAt: resent.body.created_at as string };
    clock.now = Date.now();
    // (another consumer: this one's cache of the endpoint, up to a second old, would still say open)
    await consumer(clock).consume(resentDelivery);

    // Assert: delivered at once (its probe answered)
    expect(await stored(keys.webhookDelivery(resentDelivery.id))).toMatchObject({ status: 'succeeded', attempts: 1 });
  });
});

describe('a consumer killed in the middle of a batch', () => {
  it('loses nothing: the batch, received again, finishes what was left (interrupted attempts are made again once their lease is over)', async () => {
    // Arrange: a healthy endpoint that has answered before (its breaker closed), four deliveries for it
    const endpointId = await createEndpoint('/healthy');
    const clock = { now: Date.now() };
    await consumer(clock).consume(await newDelivery(endpointId));
    const batch = [await newDelivery(endpointId), await newDelivery(endpointId), await newDelivery(endpointId), await newDelivery(endpointId)];
    const [done1, done2, cut1, cut2] = batch as [WebhookDelivery, WebhookDelivery, WebhookDelivery, WebhookDelivery];

    // Act: a consumer that dies while two of its attempts are in flight (their requests never come back; the
    // invocation never returns, so no message of the batch is deleted)
    const real = createHttpSender({ policy: { allowInsecure: true }, timeoutMs: TIMEOUT_MS });
    const cut = new Set([cut1.eventId, cut2.eventId]);
    let inFlight = 0;
    const dying = consumer(clock, (request) => (cut.has(request.headers['webhook-id'] ?? '') ? new Promise(() => void (inFlight += 1)) : real(request)));
    void dying.consume(...batch);
    await waitFor(async () => inFlight === 2 && (await stored(keys.webhookDelivery(done2.id))).status === 'succeeded' && (await stored(keys.webhookDelivery(done1.id))).status === 'succeeded');
    expect(await stored(keys.webhookDelivery(cut1.id))).toMatchObject({ status: 'pending', attempts: 1 });

    // Act: SQS hands the whole batch over again after its visibility timeout (3 minutes), to a new consumer
    clock.now += 180_000;
    const revived = consumer(clock);
    expect(await revived.consume(...batch)).toEqual({ batchItemFailures: [] });

    // Assert: every delivery succeeded; the interrupted ones at their second attempt, their events delivered
    for (const delivery of [done1, done2]) expect(await stored(keys.webhookDelivery(delivery.id))).toMatchObject({ status: 'succeeded', attempts: 1 });
    for (const delivery of [cut1, cut2]) {
      expect(await stored(keys.webhookDelivery(delivery.id))).toMatchObject({ status: 'succeeded', attempts: 2 });
      expect(receiver.arrivals('/healthy', delivery.eventId)).toHaveLength(1);
    }
  });
});

async function waitFor(probe: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
