/**
 * Crash-safe delivery, end to end over HTTP, through the real pipeline as `npm start` composes it
 * (infra/local/runtime/runtime.ts): a sandbox processor whose signed events go to this file's HTTP API, the processor
 * webhook handler, the table's stream read by the stream relay, the local queue behind its SQS front (the
 * service's own SQS client sends to it), the real consumer (functions/webhook-delivery.ts), and partner
 * endpoints that are real HTTP servers on 127.0.0.1.
 *
 * The pipeline runs against a table of its own in the integration run's DynamoDB Local: its stream relay and
 * sweep would otherwise deliver the deliveries other test files write into the shared table (and this file's
 * consumer would make attempts those files count). `WEBHOOK_RETRY_BASE_MS` is small, so the three attempts of
 * a failing delivery take about 2 s (each wait is rounded up to whole seconds, at least 1 s).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHmac, randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { type ProcessorEvent, signatureHeader } from '../../../infra/local/sandbox/processor';
import type { PartnerCredentials, TestApi as TestApiType } from '../../support/api';
import { until, useDeliveryWorld } from '../../support/delivery-world';
import { type ReceivedWebhook, WebhookReceiver } from '../../support/webhook-receiver';

const world = await useDeliveryWorld('e2e');
const { sandbox, stripe } = world;
const PROCESSOR_WEBHOOK_SECRET = world.processorWebhookSecret;
const { eventBody, intentObject } = await import('../../support/processor-events');

let api: TestApiType;
beforeAll(() => {
  api = world.api();
});

// ---------------------------------------------------------------------------------------------------------
// Helpers

/**
 * decisions.md §6, computed here on its own (not with lib/domain): amount × percent / 100 in exact integer
 * arithmetic (percentages have at most 4 decimals), rounded half-up.
 */
function percentOfMinor(amountMinor: number, percent: number): number {
  const numerator = BigInt(amountMinor) * BigInt(Math.round(percent * 10_000));
  const denominator = 100n * 10_000n;
  return Number((2n * numerator + denominator) / (2n * denominator));
}

interface Endpoint {
  id: string;
  secret: string;
  path: string;
}

async function createEndpoint(partner: PartnerCredentials, receiver: WebhookReceiver, path: string, events: string[]): Promise<Endpoint> {
  const created = await api.admin('POST', `/admin/partners/${partner.partnerId}/webhook-endpoints`, { name: `endpoint ${path}`, url: receiver.url(path), events });
  if (created.status !== 201) throw new Error(`endpoint not created: ${JSON.stringify(created.body)}`);
  expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  return { id: created.body.id, secret: created.body.secret, path };
}

async function checkout(partner: PartnerCredentials, clientId: string, amount: number, meta?: Record<string, unknown>) {
  const partnerReference = `order-${randomUUID()}`;
  const response = await api.signed(partner, '/transactions/checkout-intent', {
    partner_id: partner.partnerId,
    client_id: clientId,
    amount,
    currency: 'USD',
    email: 'buyer@example.com',
    partner_reference: partnerReference,
    ...(meta === undefined ? {} : { meta }),
  });
  if (response.status !== 201) throw new Error(`checkout failed: ${JSON.stringify(response.body)}`);
  return { svcTxId: response.body.svc_tx_id as string, intentId: response.body.processor_payment_intent_id as string, partnerReference };
}

async function transactionIn(partner: PartnerCredentials, svcTxId: string, status: string): Promise<Record<string, any>> {
  return until(`${svcTxId} to be ${status}`, async () => {
    const { body } = await api.read(partner, `/transactions/${svcTxId}`);
    return body?.status === status ? (body as Record<string, any>) : undefined;
  });
}

/** The partner's deliveries of one transaction, as the admin list shows them. */
async function deliveriesOf(partner: PartnerCredentials, svcTxId: string, status?: string): Promise<Array<Record<string, any>>> {
  const listed = await api.admin('GET', `/admin/partners/${partner.partnerId}/webhook-deliveries?limit=200${status === undefined ? '' : `&status=${status}`}`);
  expect(listed.status).toBe(200);
  return (listed.body.items as Array<Record<string, any>>).filter((delivery) => delivery.svc_tx_id === svcTxId);
}

/** Once the pipeline is idle for every delivery of the partner: nothing of theirs relayed, queued or due is left. */
const partnerIdle = (partner: PartnerCredentials) =>
  world.untilIdle(async () => {
    const listed = await api.admin('GET', `/admin/partners/${partner.partnerId}/webhook-deliveries?limit=200`);
    expect(listed.status).toBe(200);
    return listed.body.items as Array<{ id: string; status: string }>;
  });

/**
 * Waits until `count` deliveries of the transaction exist and none is pending, then until the pipeline is idle:
 * a duplicate delivery or attempt would have to be on its way then, so what is there now is all there will be.
 */
async function deliveriesSettled(partner: PartnerCredentials, svcTxId: string, count: number): Promise<Array<Record<string, any>>> {
  await until(`${count} finished deliveries of ${svcTxId}`, async () => {
    const deliveries = await deliveriesOf(partner, svcTxId);
    return deliveries.length >= count && deliveries.every((delivery) => delivery.status !== 'pending') ? true : undefined;
  });
  await partnerIdle(partner);
  return deliveriesOf(partner, svcTxId);
}

/** processorFee + platformFee + netAmount of a USD transaction, in cents. */
const minorSum = (transaction: Record<string, any>) =>
  Math.round(transaction.processorFee * 100) + Math.round(transaction.platformFee * 100) + Math.round(transaction.netAmount * 100);

const bodyOf = (request: ReceivedWebhook) => JSON.parse(request.body) as Record<string, unknown>;
const requestsAt = (receiver: WebhookReceiver, path: string, svcTxId: string) =>
  receiver.requests.filter((request) => request.path === path && bodyOf(request).svc_tx_id === svcTxId);

/** Both signatures, as a partner verifies them (docs/webhooks.md): node:crypto and the standardwebhooks package. */
function expectSignedBy(secret: string, request: ReceivedWebhook): void {
  expect(request.headers['x-svc-signature']).toBe(createHmac('sha256', secret).update(request.body).digest('hex'));
  expect(new Webhook(secret).verify(request.body, request.headers as Record<string, string>)).toEqual(JSON.parse(request.body));
  expect(request.headers['x-svc-event-id']).toBe(request.headers['webhook-id']);
  expect(request.headers['x-svc-timestamp']).toBe(request.headers['webhook-timestamp']);
  expect(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
}

/** The sandbox's event of `type` about `intentId`, once its (only) delivery to the API has an answer. */
function sandboxEvent(type: string, intentId: string) {
  return until(`the sandbox's ${type} for ${intentId}`, () =>
    sandbox.events().find((record) => {
      const object = record.event.data.object as { id: string; payment_intent?: string };
      return record.event.type === type && (object.id === intentId || object.payment_intent === intentId) && record.attempts.length > 0;
    }),
  );
}

/** Posts a processor event to the API as the sandbox does: pretty-printed JSON, signed with `timestamp`. */
function postProcessorEvent(payload: string, timestamp = Math.floor(Date.now() / 1000)) {
  return api.request('POST', '/webhooks/processor', {
    headers: { 'content-type': 'application/json', 'processor-signature': signatureHeader(PROCESSOR_WEBHOOK_SECRET, payload, timestamp) },
    body: payload,
  });
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;

// ---------------------------------------------------------------------------------------------------------

describe('a partner with three endpoints: A (succeeded), B (succeeded + refunded), C (failed only)', () => {
  const SERVICE_FEE = 1.5;
  const CLIENT_FEE = 3;
  const FLAT_USD = 0.3;
  let receiver: WebhookReceiver;
  let partner: PartnerCredentials;
  let clientId: string;
  let a: Endpoint;
  let b: Endpoint;
  let c: Endpoint;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    partner = await api.createPartner({ service_fee_percentage: SERVICE_FEE, kyc_status: 'approved' });
    clientId = await api.createClient(partner, { partner_fee_percentage: CLIENT_FEE, partner_fee_flat_usd: FLAT_USD });
    a = await createEndpoint(partner, receiver, '/a', ['transaction_succeeded']);
    b = await createEndpoint(partner, receiver, '/b', ['transaction_succeeded', 'transaction_refunded']);
    c = await createEndpoint(partner, receiver, '/c', ['transaction_failed']);
    // Six calls, three of them sealing a secret: on a loaded machine they have taken longer than the default 5 s.
  }, 20_000);
  afterAll(() => receiver.close());

  it('confirming with pm_card_visa: succeeded, fees summing exactly, one webhook each to A and B signed both ways, none to C', async () => {
    // Arrange: 25.00 USD, where two of the terms end in exactly .5 of a cent (half-up)
    const amount = 25;
    const amountMinor = 2500;
    const meta = { cart: 'c-77', note: 'ünïcödé 🛒', items: [1, 2] };
    const { svcTxId, intentId, partnerReference } = await checkout(partner, clientId, amount, meta);

    // Act
    await stripe.paymentIntents.confirm(intentId, { payment_method: 'pm_card_visa' });

    // Assert: the transaction and its fees, computed here independently (decisions.md §6)
    const processorFee = percentOfMinor(amountMinor, 2.9); // 72.5 -> 73
    const platformFee = Math.min(percentOfMinor(amountMinor, CLIENT_FEE) + Math.round(FLAT_USD * 100), amountMinor - processorFee); // 75 + 30
    const svcEarning = Math.min(percentOfMinor(amountMinor, SERVICE_FEE), platformFee); // 37.5 -> 38
    const net = amountMinor - processorFee - platformFee;
    expect([processorFee, platformFee, svcEarning, net]).toEqual([73, 105, 38, 2322]);
    const transaction = await transactionIn(partner, svcTxId, 'succeeded');
    expect(transaction).toMatchObject({
      amount: 25,
      currency: 'USD',
      processorFeePercent: 2.9,
      partnerFeePercent: CLIENT_FEE,
      svcEarningPercent: SERVICE_FEE,
      partnerPayoutPercent: CLIENT_FEE - SERVICE_FEE,
      processorFee: processorFee / 100,
      platformFee: platformFee / 100,
      svcEarningAmount: svcEarning / 100,
      netAmount: net / 100,
    });
    expect(minorSum(transaction)).toBe(amountMinor);

    // Assert: one delivery each for A and B, none for C, all delivered on the first attempt
    const deliveries = await deliveriesSettled(partner, svcTxId, 2);
    expect(deliveries.map((delivery) => delivery.endpoint_id).sort()).toEqual([a.id, b.id].sort());
    expect(deliveries.map((delivery) => delivery.endpoint_id)).not.toContain(c.id);
    for (const delivery of deliveries) expect(delivery).toMatchObject({ event: 'transaction_succeeded', status: 'succeeded', attempts: 1, last_http_status: 200 });
    const atA = requestsAt(receiver, '/a', svcTxId);
    const atB = requestsAt(receiver, '/b', svcTxId);
    expect(atA).toHaveLength(1);
    expect(atB).toHaveLength(1);
    expect(receiver.requests.filter((request) => request.path === '/c')).toEqual([]);

    // Assert: the body, exactly the spec's shape in its order, the same bytes to both
    const [toA] = atA as [ReceivedWebhook];
    const [toB] = atB as [ReceivedWebhook];
    expect(toA.method).toBe('POST');
    expect(toA.headers['content-type']).toBe('application/json');
    expect(Object.keys(bodyOf(toA))).toEqual(['event', 'svc_tx_id', 'partner_id', 'client_id', 'partner_reference', 'status', 'amount', 'currency', 'meta']);
    expect(bodyOf(toA)).toEqual({
      event: 'transaction_succeeded',
      svc_tx_id: svcTxId,
      partner_id: partner.partnerId,
      client_id: clientId,
      partner_reference: partnerReference,
      status: 'succeeded',
      amount: 25,
      currency: 'USD',
      meta,
    });
    expect(toB.body).toBe(toA.body);

    // Assert: both signatures verify, each with its own endpoint's secret; one event id for both endpoints
    expectSignedBy(a.secret, toA);
    expectSignedBy(b.secret, toB);
    expect(toA.headers['x-svc-signature']).not.toBe(toB.headers['x-svc-signature']);
    expect(toA.headers['webhook-id']).toMatch(/^evt_/);
    expect(toB.headers['webhook-id']).toBe(toA.headers['webhook-id']);
    expect(new Set(deliveries.map((delivery) => delivery.event_id))).toEqual(new Set([toA.headers['webhook-id']]));
  }, 30_000);

  it('the same signed event 5 more times, and a succeeded event after a full refund: one move and one webhook per subscribed endpoint each', async () => {
    // Arrange: a payment that succeeded through the sandbox
    const { svcTxId, intentId } = await checkout(partner, clientId, 12.34);
    await stripe.paymentIntents.confirm(intentId, { payment_method: 'pm_card_visa' });
    const succeeded = await transactionIn(partner, svcTxId, 'succeeded');
    const original = await sandboxEvent('payment_intent.succeeded', intentId);
    expect(original.attempts[0]?.status).toBe(200);
    // The exact bytes and header the sandbox sent: its payload is the pretty-printed event, signed at the attempt's start
    const payload = JSON.stringify(original.event, null, 2);
    const sentAt = Math.floor(Date.parse(original.attempts[0]?.at ?? '') / 1000);

    // Act: the same event, 5 more times at once
    const replays = await Promise.all(Array.from({ length: 5 }, () => postProcessorEvent(payload, sentAt)));

    // Assert: each acknowledged with the current status, nothing changed
    for (const replay of replays) expect({ status: replay.status, body: replay.body }).toEqual({ status: 200, body: { received: true, svc_tx_id: svcTxId, status: 'succeeded' } });
    expect(await transactionIn(partner, svcTxId, 'succeeded')).toEqual(succeeded);

    // Act: a full refund at the sandbox, its charge.refunded replayed 5 times too
    await stripe.refunds.create({ payment_intent: intentId });
    const refunded = await transactionIn(partner, svcTxId, 'refunded');
    const refundEvent = await sandboxEvent('charge.refunded', intentId);
    const refundPayload = JSON.stringify(refundEvent.event, null, 2);
    const refundReplays = await Promise.all(Array.from({ length: 5 }, () => postProcessorEvent(refundPayload)));
    // Act: out of order, after the refund: the old succeeded event again, and a new succeeded event (another id)
    const lateDuplicate = await postProcessorEvent(payload);
    const lateEvent: ProcessorEvent = { ...original.event, id: `evt_late${randomUUID().replace(/-/g, '').slice(0, 20)}`, created: Math.floor(Date.now() / 1000) };
    const late = await postProcessorEvent(JSON.stringify(lateEvent, null, 2));

    // Assert: every one acknowledged with the current status; the transaction moved once, to refunded
    const refundedAnswer = { status: 200, body: { received: true, svc_tx_id: svcTxId, status: 'refunded' } };
    for (const replay of [...refundReplays, lateDuplicate, late]) expect({ status: replay.status, body: replay.body }).toEqual(refundedAnswer);
    expect(await transactionIn(partner, svcTxId, 'refunded')).toEqual(refunded);
    expect(refunded).toMatchObject({ processorFee: succeeded.processorFee, platformFee: succeeded.platformFee, netAmount: succeeded.netAmount });

    // Assert: one delivery per subscribed endpoint per move: succeeded to A and B, refunded to B only
    const deliveries = await deliveriesSettled(partner, svcTxId, 3);
    expect(deliveries.map((delivery) => [delivery.event, delivery.endpoint_id, delivery.status, delivery.attempts]).sort()).toEqual(
      [
        ['transaction_refunded', b.id, 'succeeded', 1],
        ['transaction_succeeded', a.id, 'succeeded', 1],
        ['transaction_succeeded', b.id, 'succeeded', 1],
      ].sort(),
    );
    const atA = requestsAt(receiver, '/a', svcTxId);
    const atB = requestsAt(receiver, '/b', svcTxId);
    expect(atA.map((request) => bodyOf(request).event)).toEqual(['transaction_succeeded']);
    expect(atB.map((request) => bodyOf(request).event).sort()).toEqual(['transaction_refunded', 'transaction_succeeded']);
    expect(requestsAt(receiver, '/c', svcTxId)).toEqual([]);
    const refundWebhook = atB.find((request) => bodyOf(request).event === 'transaction_refunded') as ReceivedWebhook;
    expect(bodyOf(refundWebhook)).toMatchObject({ status: 'refunded', amount: 12.34, currency: 'USD' });
    expectSignedBy(b.secret, refundWebhook);
    // Two moves, two partner events
    expect(new Set(atB.map((request) => request.headers['webhook-id'])).size).toBe(2);
  }, 30_000);

  it('the same signed event posted 6 times at once (the copies race each other): one move, one webhook per subscribed endpoint', async () => {
    // Arrange: a pending payment, and the succeeded event the processor would send for it, signed with its secret
    const { svcTxId, intentId } = await checkout(partner, clientId, 3.21);
    const payload = eventBody('payment_intent.succeeded', intentObject(intentId, 321, 'usd'));

    // Act
    const answers = await Promise.all(Array.from({ length: 6 }, () => postProcessorEvent(payload)));

    // Assert: every copy answered with the status it found; the transaction moved once
    for (const answer of answers) expect({ status: answer.status, body: answer.body }).toEqual({ status: 200, body: { received: true, svc_tx_id: svcTxId, status: 'succeeded' } });
    const transaction = await transactionIn(partner, svcTxId, 'succeeded');
    expect(minorSum(transaction)).toBe(321);
    const deliveries = await deliveriesSettled(partner, svcTxId, 2);
    expect(deliveries.map((delivery) => delivery.endpoint_id).sort()).toEqual([a.id, b.id].sort());
    expect(new Set(deliveries.map((delivery) => delivery.event_id)).size).toBe(1);
    expect(requestsAt(receiver, '/a', svcTxId)).toHaveLength(1);
    expect(requestsAt(receiver, '/b', svcTxId)).toHaveLength(1);
    expect(requestsAt(receiver, '/c', svcTxId)).toEqual([]);
  }, 30_000);
});

describe('an endpoint answering 500', () => {
  let receiver: WebhookReceiver;
  let partner: PartnerCredentials;
  let endpoint: Endpoint;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    partner = await api.createPartner();
    endpoint = await createEndpoint(partner, receiver, '/failing', ['transaction_succeeded']);
  });
  afterAll(() => receiver.close());

  it('gets exactly 3 attempts; the delivery is failed with an audit row; resend delivers the same event id and body', async () => {
    // Arrange
    receiver.answer({ status: 500 }, { status: 500 }, { status: 500 });
    const clientId = await api.createClient(partner);
    const { svcTxId, intentId } = await checkout(partner, clientId, 7.5, { order: 42 });

    // Act
    await stripe.paymentIntents.confirm(intentId, { payment_method: 'pm_card_visa' });

    // Assert: three attempts of one event, the same body each time, then failed
    const [failed] = await until('the delivery to be failed', async () => {
      const found = await deliveriesOf(partner, svcTxId, 'failed');
      return found.length > 0 ? found : undefined;
    });
    expect(failed).toMatchObject({
      endpoint_id: endpoint.id,
      event: 'transaction_succeeded',
      status: 'failed',
      attempts: 3,
      last_http_status: 500,
      last_error: 'HTTP 500: not a 2xx answer',
    });
    // No fourth attempt comes on its own: not from a retry message (the queue holds none once idle), not from a sweep
    await world.sweepNow();
    await partnerIdle(partner);
    const attempts = requestsAt(receiver, '/failing', svcTxId);
    expect(attempts).toHaveLength(3);
    expect(receiver.requests).toHaveLength(3);
    expect(new Set(attempts.map((request) => request.body)).size).toBe(1);
    expect(new Set(attempts.map((request) => request.headers['webhook-id']))).toEqual(new Set([failed?.event_id]));
    for (const request of attempts) expectSignedBy(endpoint.secret, request);
    expect(await deliveriesOf(partner, svcTxId)).toEqual([failed]);

    // Assert: the audit trail, with the final failure
    const audit = await api.admin('GET', `/admin/audit-events?partner_id=${partner.partnerId}&limit=200`);
    expect(audit.status).toBe(200);
    const rows = (audit.body.items as Array<Record<string, any>>).filter((row) => row.resource_id === failed?.id).reverse();
    expect(rows.map((row) => [row.type, row.details.attempt, row.details.http_status])).toEqual([
      ['webhook_delivery.attempt_failed', 1, 500],
      ['webhook_delivery.attempt_failed', 2, 500],
      ['webhook_delivery.failed', 3, 500],
    ]);
    expect(rows[2]).toMatchObject({
      partner_id: partner.partnerId,
      resource_type: 'webhook_delivery',
      details: { event_id: failed?.event_id, endpoint_id: endpoint.id, svc_tx_id: svcTxId, event: 'transaction_succeeded', error: 'HTTP 500: not a 2xx answer' },
    });

    // Act: the endpoint is fixed (the receiver answers 200 from now on); an admin resends
    const resent = await api.admin('POST', `/admin/webhook-deliveries/${failed?.id}/resend`);

    // Assert: a new delivery of the same event, delivered once with the same event id and the same bytes
    expect(resent.status).toBe(202);
    expect(resent.body).toMatchObject({ event_id: failed?.event_id, endpoint_id: endpoint.id, status: 'pending', attempts: 0 });
    expect(resent.body.id).not.toBe(failed?.id);
    await receiver.waitForRequests(4);
    const delivered = await until('the resent delivery to succeed', async () => {
      const found = (await deliveriesOf(partner, svcTxId)).find((delivery) => delivery.id === resent.body.id);
      return found?.status === 'succeeded' ? found : undefined;
    });
    expect(delivered).toMatchObject({ event_id: failed?.event_id, attempts: 1, last_http_status: 200 });
    await partnerIdle(partner);
    expect(receiver.requests).toHaveLength(4);
    const resentRequest = receiver.requests[3] as ReceivedWebhook;
    expect(resentRequest.body).toBe(attempts[0]?.body);
    expect(resentRequest.headers['x-svc-event-id']).toBe(failed?.event_id);
    expect(resentRequest.headers['webhook-id']).toBe(failed?.event_id);
    expectSignedBy(endpoint.secret, resentRequest);
    expect((await deliveriesOf(partner, svcTxId)).find((delivery) => delivery.id === failed?.id)).toMatchObject({ status: 'failed', attempts: 3 });
  }, 40_000);
});

describe('latency from processor event to partner webhook', () => {
  let receiver: WebhookReceiver;
  let partner: PartnerCredentials;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    partner = await api.createPartner();
    await createEndpoint(partner, receiver, '/latency', ['transaction_succeeded']);
  });
  afterAll(() => receiver.close());

  it('is measured for 20 payments confirmed one after another (logged, not asserted), each delivered once', async () => {
    const clientId = await api.createClient(partner);
    const samples: number[] = [];
    const svcTxIds: string[] = [];

    for (let i = 0; i < 20; i++) {
      const { svcTxId, intentId } = await checkout(partner, clientId, 10 + i / 100);
      svcTxIds.push(svcTxId);
      // Resolves the moment the receiver has the request (WebhookReceiver notifies as each one arrives).
      const received = receiver.waitForRequests(i + 1).then(() => Date.now());
      await stripe.paymentIntents.confirm(intentId, { payment_method: 'pm_card_visa' });
      const arrivedAt = await received;
      // From the moment the sandbox started posting its signed payment_intent.succeeded to the API.
      const event = await sandboxEvent('payment_intent.succeeded', intentId);
      samples.push(arrivedAt - Date.parse(event.attempts[0]?.at ?? ''));
    }

    const sorted = [...samples].sort((x, y) => x - y);
    console.log(
      `processor event -> partner webhook received, ${samples.length} sequential payments (in-process pipeline, ${process.env.WEBHOOK_RETRY_BASE_MS} ms retry base): ` +
        `p50 ${percentile(sorted, 50)} ms, p95 ${percentile(sorted, 95)} ms, max ${sorted.at(-1)} ms`,
    );
    expect(receiver.requests.map((request) => bodyOf(request).svc_tx_id)).toEqual(svcTxIds);
    expect(samples.every((sample) => Number.isFinite(sample) && sample >= 0)).toBe(true);
  }, 90_000);
});
