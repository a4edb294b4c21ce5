/**
 * The delivery consumer's endpoint breaker and its crash safety, against DynamoDB Local and real HTTP endpoints
 * on 127.0.0.1 (decisions.md §8; docs/webhooks.md "Slow endpoints"). The handler is called directly with
 * SQS-shaped events; a fake queue records the messages it sends, and the test's clock moves instead of time.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent } from 'aws-lambda';
import { createHandler } from '../../../functions/webhook-delivery';
import { webhookDeliveryDeps } from '../../../lib/composition';
import { cachedEndpoints } from '../../../lib/store/endpoint-cache';
import * as webhookEndpoints from '../../../lib/store/webhook-endpoints';
import { breakerSettings, type BreakerState, NEW_ENDPOINT_BREAKER } from '../../../lib/domain/endpoint-breaker';
import type { WebhookDelivery } from '../../../lib/domain/webhooks';
import { parkedDeliveries, putNewDelivery } from '../../../lib/store/deliveries';
import { documentClient, tableName } from '../../../lib/store/dynamo';
import { keys } from '../../../lib/store/keys';
import { MAX_BREAKER_WAIT_MS, wakeEndpoint, type WebhookDeliveryDeps } from '../../../lib/use-cases/webhook-deliveries';
import type { WebhookSender } from '../../../lib/use-cases/ports/webhook-sender';
import { createHttpSender } from '../../../lib/webhooks/http-sender';
import type { QueueMessage } from '../../../lib/webhooks/queue';
import { type PartnerCredentials, TestApi } from '../../support/api';
import { newSvcTxId, pendingDelivery } from '../../support/deliveries';
import { lambdaContext } from '../../support/events';
import { BehavingReceiver } from '../../support/reliability/receiver';

const TIMEOUT_MS = 300;
let api: TestApi;
let receiver: BehavingReceiver;
let partner: PartnerCredentials;

beforeAll(async () => {
  api = await TestApi.start();
  receiver = await BehavingReceiver.start({ '/flaky': { hang: true }, '/healthy': { status: 200 }, '/slow': { status: 200 } });
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

async function newDelivery(endpointId: string, createdAt = new Date().toISOString()): Promise<WebhookDelivery> {
  const svcTxId = newSvcTxId();
  const payload = JSON.stringify({ event: 'transaction_succeeded', svc_tx_id: svcTxId });
  const delivery = { ...pendingDelivery({ endpointId, partnerId: partner.partnerId, svcTxId, payload }), createdAt, updatedAt: createdAt };
  await documentClient.send(new TransactWriteCommand({ TransactItems: [putNewDelivery(delivery)] }));
  return delivery;
}

const stored = async (key: { pk: string; sk: string }) =>
  (await documentClient.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }))).Item ?? {};

const sqsEvent = (messages: QueueMessage[]): SQSEvent => ({
  Records: messages.map((message) => ({
    messageId: randomUUID(),
    receiptHandle: randomUUID(),
    body: JSON.stringify('deliveryId' in message ? { deliveryId: message.deliveryId } : { wake: message.wakeEndpointId }),
    attributes: { ApproximateReceiveCount: '1', SentTimestamp: '0', SenderId: 'test', ApproximateFirstReceiveTimestamp: '0', MessageGroupId: message.partnerId },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:local:000000000000:partner-webhooks',
    awsRegion: 'local',
  })),
});

/**
 * The consumer over a recording queue and the test's clock; `send` defaults to real HTTP with a short timeout.
 * `drain` hands the recorded messages back one at a time, earliest due first, moving the clock to each one's due
 * time, as the queue would.
 */
function consumer(clock: { now: number }, send?: WebhookSender, cacheClock: () => number = Date.now) {
  const queued: Array<{ message: QueueMessage; delaySeconds: number; dueAt: number }> = [];
  const deps: WebhookDeliveryDeps = {
    ...webhookDeliveryDeps,
    // A cache of its own, as each Lambda container has
    ...cachedEndpoints(webhookEndpoints, webhookEndpoints, cacheClock),
    queue: { send: async (message, delaySeconds) => void queued.push({ message, delaySeconds, dueAt: clock.now + delaySeconds * 1000 }) },
    send: send ?? createHttpSender({ policy: { allowInsecure: true }, timeoutMs: TIMEOUT_MS }),
    breakerSettings: breakerSettings(TIMEOUT_MS),
    now: () => clock.now,
    random: () => 0.5,
    sleep: async (ms) => void (clock.now += ms),
  };
  const handle = createHandler(deps);
  const consumeMessages = (...messages: QueueMessage[]) => handle(sqsEvent(messages), lambdaContext());
  return {
    deps,
    queued,
    /** The delivery messages recorded for `deliveryId`. */
    messagesOf: (deliveryId: string) => queued.filter(({ message }) => 'deliveryId' in message && message.deliveryId === deliveryId),
    wakes: () => queued.filter(({ message }) => 'wakeEndpointId' in message),
    consume: (...deliveries: WebhookDelivery[]) => consumeMessages(...deliveries.map((delivery) => ({ deliveryId: delivery.id, partnerId: delivery.partnerId }))),
    consumeMessages,
    async drain(maxMessages = 50): Promise<void> {
      for (let handed = 0; handed < maxMessages && queued.length > 0; handed += 1) {
        queued.sort((x, y) => x.dueAt - y.dueAt);
        const next = queued.shift() as (typeof queued)[number];
        clock.now = Math.max(clock.now, next.dueAt);
        expect(await consumeMessages(next.message)).toEqual({ batchItemFailures: [] });
      }
      expect(queued).toEqual([]);
    },
  };
}

const breakerOf = async (endpointId: string) => (await stored(keys.webhookEndpoint(partner.partnerId, endpointId))).breaker as BreakerState;
const circuitOf = async (endpointId: string) =>
  ((await api.admin('GET', `/admin/partners/${partner.partnerId}/webhook-endpoints`)).body.items as Array<Record<string, any>>).find((item) => item.id === endpointId)?.circuit;

describe('an endpoint that stops answering', () => {
  it('is probed one attempt at a time; its timeout opens the breaker; the rest wait parked, with no message, their attempts unchanged, until the endpoint answers again', async () => {
    // Arrange: a new endpoint that hangs, three deliveries for it
    const endpointId = await createEndpoint('/flaky');
    const [first, second, third] = [await newDelivery(endpointId), await newDelivery(endpointId), await newDelivery(endpointId)] as [WebhookDelivery, WebhookDelivery, WebhookDelivery];
    const clock = { now: Date.now() };
    const queue = consumer(clock);

    // Act: two of them in one batch
    expect(await queue.consume(first, second)).toEqual({ batchItemFailures: [] });

    // Assert: one request (the probe), timed out, its retry scheduled; the other parked: not attempted, no message
    expect(receiver.arrivals('/flaky')).toHaveLength(1);
    const [probed, waiting] = (await stored(keys.webhookDelivery(first.id))).attempts === 1 ? [first, second] : [second, first];
    expect(await stored(keys.webhookDelivery(probed.id))).toMatchObject({ status: 'pending', attempts: 1, lastError: `No response within ${TIMEOUT_MS / 1000} s` });
    expect(await stored(keys.webhookDelivery(waiting.id))).toMatchObject({ status: 'pending', attempts: 0, gsi4pk: expect.stringMatching(`^${keys.parkedPrefix(endpointId)}`) });
    expect(queue.messagesOf(waiting.id)).toEqual([]);
    expect(queue.messagesOf(probed.id)).toHaveLength(1);
    // ... the breaker open for 5 s, and one wake message for its end
    const breaker = await breakerOf(endpointId);
    expect(breaker).toMatchObject({ answeredAt: 0, cooldownMs: 5_000, leases: [], openUntil: clock.now + 5_000 });
    expect(queue.wakes()).toEqual([{ message: { wakeEndpointId: endpointId, partnerId: partner.partnerId }, delaySeconds: 5, dueAt: breaker.openUntil }]);
    expect(await circuitOf(endpointId)).toEqual({ state: 'open', open_until: new Date(breaker.openUntil).toISOString() });

    // Act: while open, the third and the probed one's retry: parked, nothing sent to the endpoint, no message
    await queue.consume(third);
    clock.now += 1_000;
    queue.queued.splice(queue.queued.findIndex(({ message }) => 'deliveryId' in message), 1);
    await queue.consume(probed);
    expect(receiver.arrivals('/flaky')).toHaveLength(1);
    for (const delivery of [third, probed]) expect((await stored(keys.webhookDelivery(delivery.id))).gsi4pk).toMatch(keys.parkedPrefix(endpointId));
    expect((await parkedDeliveries(endpointId, 10)).map(({ deliveryId }) => deliveryId).sort()).toEqual([first.id, second.id, third.id].sort());
    expect(queue.queued).toHaveLength(1); // the wake

    // Act: the endpoint recovers; the queue runs on: at the cool-down's end the wake sends the longest-waiting
    // delivery as the probe; each answered probe wakes the next; the third closes the breaker
    receiver.behave('/flaky', { status: 200 });
    await queue.drain();

    // Assert: all delivered, each once more; the breaker closed, nothing left parked
    expect(receiver.arrivals('/flaky')).toHaveLength(4);
    for (const delivery of [first, second, third]) {
      expect(await stored(keys.webhookDelivery(delivery.id))).toMatchObject({ status: 'succeeded', attempts: delivery === probed ? 2 : 1 });
      expect((await stored(keys.webhookDelivery(delivery.id))).gsi4pk).toBeUndefined();
    }
    expect(await breakerOf(endpointId)).toEqual({ ...NEW_ENDPOINT_BREAKER, answeredAt: expect.any(Number) });
    expect(await circuitOf(endpointId)).toEqual({ state: 'closed', open_until: null });
    expect(await parkedDeliveries(endpointId, 10)).toEqual([]);

    // Assert: closed, new deliveries go at once, in one batch, side by side
    const [fourth, fifth] = [await newDelivery(endpointId), await newDelivery(endpointId)];
    await queue.consume(fourth as WebhookDelivery, fifth as WebhookDelivery);
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
    expect((await circuitOf(endpointId))?.state).toBe('open');

    // Act: the partner fixes the endpoint; the admin resends the delivery, long before the cool-down ends
    receiver.behave('/dies', { status: 200 });
    const resent = await api.admin('POST', `/admin/webhook-deliveries/${doomed.id}/resend`);
    expect(resent.status).toBe(202);
    expect(await circuitOf(endpointId)).toEqual({ state: 'probing', open_until: null });
    const resentDelivery = { ...doomed, id: resent.body.id as string, attempts: 0, createdAt: resent.body.created_at as string };
    clock.now = Date.now();
    // (another consumer: this one's cache of the endpoint, up to a second old, would still say open)
    await consumer(clock).consume(resentDelivery);

    // Assert: delivered at once (its probe answered)
    expect(await stored(keys.webhookDelivery(resentDelivery.id))).toMatchObject({ status: 'succeeded', attempts: 1 });
  });
});

/** A new endpoint at `path` that never answers, its breaker opened by a first delivery's probe; the consumer that did it. */
async function deadEndpointOpened(path: string) {
  const endpointId = await createEndpoint(path);
  receiver.behave(path, { hang: true });
  const clock = { now: Date.now() };
  const queue = consumer(clock);
  await queue.consume(await newDelivery(endpointId));
  expect((await circuitOf(endpointId))?.state).toBe('open');
  return { endpointId, clock, queue };
}

describe('deliveries parked on an endpoint that never comes back', () => {
  it('are failed once parked 24 h on its open breaker, by the wake at a cool-down’s end (no attempt, an audit row)', async () => {
    // Arrange: a dead endpoint whose breaker a probe opened; a delivery made a minute short of 24 h ago, parked on it
    const { endpointId, clock, queue } = await deadEndpointOpened('/gone-for-good');
    const old = await newDelivery(endpointId, new Date(clock.now - MAX_BREAKER_WAIT_MS + 60_000).toISOString());
    clock.now += 1_000;
    expect(await queue.consume(old)).toEqual({ batchItemFailures: [] });
    expect(await stored(keys.webhookDelivery(old.id))).toMatchObject({ status: 'pending', attempts: 0, gsi4pk: expect.any(String) });

    // Act: two minutes on, the wake at the cool-down's end
    clock.now += 120_000;
    const wake = queue.wakes().at(-1);
    expect(wake).toBeDefined();
    const step = await wakeEndpoint(queue.deps, { partnerId: partner.partnerId, endpointId });

    // Assert: failed without an attempt, out of the parked index, audited; the endpoint still probed by another
    expect(step).toMatchObject({ expired: 1 });
    expect(await stored(keys.webhookDelivery(old.id))).toMatchObject({ status: 'failed', attempts: 0, lastError: expect.stringContaining('circuit breaker open for over 24 h') });
    expect((await stored(keys.webhookDelivery(old.id))).gsi4pk).toBeUndefined();
    const audit = (await api.admin('GET', `/admin/audit-events?partner_id=${partner.partnerId}&type=webhook_delivery.failed`)).body.items as Array<Record<string, any>>;
    expect(audit.some((event) => event.resource_id === old.id)).toBe(true);
  });

  it('are failed as soon as their endpoint is deleted and a wake comes (the endpoint was deleted)', async () => {
    // Arrange: a dead endpoint, open, with two deliveries parked on it
    const { endpointId, clock, queue } = await deadEndpointOpened('/deleted');
    const parked = [await newDelivery(endpointId), await newDelivery(endpointId)];
    clock.now += 1_000;
    await queue.consume(...parked);
    expect(await parkedDeliveries(endpointId, 10)).toHaveLength(2);

    // Act: the partner deletes the endpoint; the queue runs on (the cool-down's wake, the first delivery's retry)
    expect((await api.admin('DELETE', `/admin/partners/${partner.partnerId}/webhook-endpoints/${endpointId}`)).status).toBe(204);
    await queue.drain();

    // Assert: every delivery failed, none left parked
    for (const delivery of parked) expect(await stored(keys.webhookDelivery(delivery.id))).toMatchObject({ status: 'failed', attempts: 0, lastError: 'The webhook endpoint was deleted' });
    expect(await parkedDeliveries(endpointId, 10)).toEqual([]);
  });
});

describe('a consumer whose cached view of the breaker is from before it closed', () => {
  it('parks a delivery on it, and the late wake the close sent wakes it', async () => {
    // Arrange: an endpoint whose breaker is open for a minute, one probe short of closing; a consumer that caches
    // that view
    const endpointId = await createEndpoint('/healthy');
    const clock = { now: Date.now() };
    const read = await webhookEndpoints.getBreaker(partner.partnerId, endpointId);
    const open: BreakerState = { ...NEW_ENDPOINT_BREAKER, answeredAt: 1, openUntil: clock.now + 60_000, cooldownMs: 60_000, probesToClose: 1 };
    expect(await webhookEndpoints.putBreaker(partner.partnerId, endpointId, open, read?.revision ?? 0)).toBe(true);
    const stale = consumer(clock, undefined, () => 0); // its cache never expires
    await stale.deps.endpoints.getWebhookEndpointWithSecret(partner.partnerId, endpointId);

    // Act: an admin resend ends the cool-down (as resendDelivery does); another consumer's probe answers and closes
    // the breaker; its wake at once finds nothing
    const opened = await webhookEndpoints.getBreaker(partner.partnerId, endpointId);
    expect(await webhookEndpoints.putBreaker(partner.partnerId, endpointId, { ...open, openUntil: clock.now }, opened?.revision ?? 0)).toBe(true);
    const closer = consumer(clock);
    await closer.consume(await newDelivery(endpointId));
    expect(await circuitOf(endpointId)).toEqual({ state: 'closed', open_until: null });
    const atOnce = closer.queued.filter(({ dueAt }) => dueAt <= clock.now);
    expect(atOnce).toHaveLength(1);
    await closer.consumeMessages(...atOnce.map(({ message }) => message));
    // ... then the stale consumer, its cache saying open for most of a minute yet, parks a new delivery
    const late = await newDelivery(endpointId);
    await stale.consume(late);
    expect((await stored(keys.webhookDelivery(late.id))).gsi4pk).toMatch(keys.parkedPrefix(endpointId));

    // Assert: the close's second wake, 2 s after it, wakes it, and it is delivered
    expect(closer.wakes().map(({ dueAt }) => dueAt - clock.now)).toEqual([0, 2_000]);
    closer.queued.splice(0, closer.queued.length, ...closer.wakes().filter(({ dueAt }) => dueAt > clock.now));
    await closer.drain();
    expect(await stored(keys.webhookDelivery(late.id))).toMatchObject({ status: 'succeeded', attempts: 1 });
  });
});

describe('an endpoint that answers, slowly', () => {
  it('holds two attempts at a time once found slow: the rest wait parked and are woken as leases are given back; a fast answer frees it', async () => {
    // Arrange: an endpoint that has answered fast (closed), then takes 1.2 s to answer each delivery; the sender
    // counts the attempts in flight at once
    const endpointId = await createEndpoint('/slow');
    receiver.behave('/slow', { status: 200 });
    const clock = { now: Date.now() };
    let answerMs = 1_200;
    let inFlight = 0;
    let mostInFlight = 0;
    const real = createHttpSender({ policy: { allowInsecure: true }, timeoutMs: TIMEOUT_MS });
    const slowSender: WebhookSender = async (request) => {
      inFlight += 1;
      mostInFlight = Math.max(mostInFlight, inFlight);
      const result = await real(request);
      await new Promise((resolve) => setTimeout(resolve, 20)); // side by side for a moment in real time
      clock.now += answerMs;
      inFlight -= 1;
      return result;
    };
    const queue = consumer(clock, slowSender);
    await queue.consume(await newDelivery(endpointId));
    expect((await circuitOf(endpointId))?.state).toBe('slow');
    expect(mostInFlight).toBe(1);

    // Act: six deliveries in one batch
    const six = [] as WebhookDelivery[];
    for (let i = 0; i < 6; i += 1) six.push(await newDelivery(endpointId));
    mostInFlight = 0;
    expect(await queue.consume(...six)).toEqual({ batchItemFailures: [] });

    // Assert: two went, each under a lease; four parked, with no message; the two answers sent wakes
    expect(mostInFlight).toBe(2);
    const items = await Promise.all(six.map((delivery) => stored(keys.webhookDelivery(delivery.id))));
    expect(items.filter((item) => item.status === 'succeeded')).toHaveLength(2);
    expect(items.filter((item) => item.status === 'pending' && item.attempts === 0 && typeof item.gsi4pk === 'string')).toHaveLength(4);
    expect(queue.queued.length).toBeGreaterThan(0);
    expect(queue.queued.every(({ message }) => 'wakeEndpointId' in message)).toBe(true);

    // Act: the queue runs on
    await queue.drain();

    // Assert: every one delivered once, never more than two at once; the breaker holds no lease
    for (const delivery of six) expect(await stored(keys.webhookDelivery(delivery.id))).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(receiver.arrivals('/slow')).toHaveLength(7);
    expect(mostInFlight).toBe(2);
    expect(await breakerOf(endpointId)).toMatchObject({ slow: true, leases: [] });

    // Act: the endpoint answers fast again
    answerMs = 30;
    await queue.consume(await newDelivery(endpointId));

    // Assert: fast, no lease needed
    expect(await breakerOf(endpointId)).toMatchObject({ slow: false, leases: [] });
    expect((await circuitOf(endpointId))?.state).toBe('closed');
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
