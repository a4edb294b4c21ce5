/**
 * The example partner backend (examples/partner-backend) against the real local service: its server-side order
 * prices and per-attempt records (POST /checkout), its webhook receiver fed by the service's own delivery pipeline
 * (verify, store, answer, reconcile after), its handling of stale, forged and repeated events, and GET /orders
 * reconciling with the service.
 *
 * The world is test/integration/webhooks/end-to-end.test.ts's: a sandbox processor whose signed events go to this file's HTTP API,
 * the processor webhook, the stream relay, the local queue and the real delivery consumer, against a table of
 * this file's own (the pipeline would otherwise deliver other files' deliveries). The example backend runs on
 * 127.0.0.1 as a registered webhook endpoint; a second endpoint, a recording receiver, keeps the raw requests the
 * service sends, so the example's verifier can be held to them byte for byte.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { type CheckoutAttempt, InMemoryAttemptStore } from '../../../examples/partner-backend/src/attempts';
import { InMemoryOrders, type Order } from '../../../examples/partner-backend/src/orders';
import { reconcile } from '../../../examples/partner-backend/src/reconciliation';
import { type PartnerBackend, startPartnerBackend } from '../../../examples/partner-backend/src/server';
import type * as example from '../../../examples/partner-backend/src/service-client';
import { idempotencyKeys, ServiceClient } from '../../../examples/partner-backend/src/service-client';
import { Shop } from '../../../examples/partner-backend/src/shop';
import { InMemoryProcessedEvents, PaymentWebhooks } from '../../../examples/partner-backend/src/webhooks';
import type { PartnerCredentials, TestApi as TestApiType } from '../../support/api';
import { until, useDeliveryWorld } from '../../support/delivery-world';
import { serviceClientFor } from '../../support/example-backend';
import { freePort } from '../../support/ports';
import { WebhookReceiver } from '../../support/webhook-receiver';

const world = await useDeliveryWorld('example-server');
const { stripe } = world;

let api: TestApiType;
beforeAll(() => {
  api = world.api();
});
const clientFor = serviceClientFor(world);

// ---------------------------------------------------------------------------------------------------------

describe('the example backend, with the service delivering its webhooks', () => {
  const ALL_EVENTS = ['transaction_succeeded', 'transaction_failed', 'transaction_abandoned', 'transaction_refunded', 'transaction_chargeback'];
  let partner: PartnerCredentials;
  let clientId: string;
  let service: ServiceClient;
  let attempts: InMemoryAttemptStore;
  /** The shop's orders: each test puts the ones its browser will name. */
  let orders: InMemoryOrders;
  let backend: PartnerBackend;
  let backendSecret: string;
  /** Records every request the service sends to its endpoint (subscribed to every event). */
  let recorder: WebhookReceiver;
  let recorderSecret: string;
  let backendEndpointId: string;

  /** A webhook endpoint of `partner`'s; returns its id and its secret. */
  async function createEndpoint(url: string, events: string[]): Promise<{ id: string; secret: string }> {
    const created = await api.admin('POST', `/admin/partners/${partner.partnerId}/webhook-endpoints`, { name: `endpoint ${randomUUID().slice(0, 8)}`, url, events });
    if (created.status !== 201) throw new Error(`endpoint not created: ${JSON.stringify(created.body)}`);
    return { id: created.body.id, secret: created.body.secret };
  }

  beforeAll(async () => {
    partner = await api.createPartner();
    clientId = await api.createClient(partner);
    service = clientFor(partner);
    attempts = new InMemoryAttemptStore();
    orders = new InMemoryOrders();
    recorder = await WebhookReceiver.start();
    recorderSecret = (await createEndpoint(recorder.url('/recorder'), ALL_EVENTS)).secret;
    // The backend hears of successes only: any later status it knows comes from reconciling with the service.
    const backendPort = await freePort();
    const backendEndpoint = await createEndpoint(`http://127.0.0.1:${backendPort}/webhooks/payments`, ['transaction_succeeded']);
    backendEndpointId = backendEndpoint.id;
    backendSecret = backendEndpoint.secret;
    backend = await startPartnerBackend({ port: backendPort, partnerId: partner.partnerId, service, webhookSecret: backendSecret, orders, attempts });
  });
  afterAll(async () => {
    await backend?.close();
    await recorder?.close();
  });

  const post = (url: string, body: string, headers: Record<string, string> = { 'content-type': 'application/json' }, signal?: AbortSignal) =>
    fetch(url, { method: 'POST', headers, body, signal }).then(async (response) => ({ status: response.status, body: (await response.json()) as Record<string, any> }));

  const postToBackend = (path: string, body: string, headers?: Record<string, string>) => post(`${backend.url}${path}`, body, headers);

  /** What the browser sends: the order's id, and whatever else it likes (`extra`), which the backend must not trust. */
  const checkoutAt = (at: PartnerBackend, partnerReference: string, extra: Record<string, unknown> = {}) =>
    post(`${at.url}/checkout`, JSON.stringify({ partner_reference: partnerReference, ...extra }));

  const getOrder = (partnerReference: string) =>
    fetch(`${backend.url}/orders/${encodeURIComponent(partnerReference)}`).then(async (response) => ({ status: response.status, body: (await response.json()) as Record<string, any> }));

  /** A new order in the shop's catalogue, priced on the server. */
  const newOrder = (): Order => {
    const order = { partner_reference: `order-${randomUUID()}`, client_id: clientId, amount: 12.34, currency: 'USD', email: 'buyer@example.com', statement_descriptor_suffix: 'ORDER 8841' };
    orders.put(order);
    return order;
  };

  /** Standard Webhooks headers for `body` under `eventId`, signed with `secret` as of `at` (the library's own signer). */
  const signedAt = (secret: string, eventId: string, body: string, at: Date): Record<string, string> => ({
    'content-type': 'application/json',
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(eventId, at, body),
  });

  /** The requests the recorder got about `svcTxId` for `event`. */
  const recorded = (svcTxId: string, event: string) =>
    recorder.requests.filter((request) => {
      const body = JSON.parse(request.body) as { svc_tx_id: string; event: string };
      return body.svc_tx_id === svcTxId && body.event === event;
    });
  const recordedOnce = (svcTxId: string, event: string) => until(`${event} of ${svcTxId} at the recorder`, () => recorded(svcTxId, event)[0]);

  /** The service's deliveries to the backend's endpoint about `svcTxId`. */
  async function backendDeliveries(svcTxId: string): Promise<Array<Record<string, any>>> {
    const listed = await api.admin('GET', `/admin/partners/${partner.partnerId}/webhook-deliveries?limit=200`);
    return (listed.body.items as Array<Record<string, any>>).filter((delivery) => delivery.svc_tx_id === svcTxId && delivery.endpoint_id === backendEndpointId);
  }

  /** An order checked out through the backend and paid in the "browser"; resolves once the backend's webhook moved it. */
  async function paidOrder(): Promise<CheckoutAttempt> {
    const order = newOrder();
    const checkout = await checkoutAt(backend, order.partner_reference);
    if (checkout.status !== 201) throw new Error(`checkout failed: ${JSON.stringify(checkout.body)}`);
    const { processor_payment_intent_id } = (await attempts.get(order.partner_reference)) as CheckoutAttempt;
    await stripe.paymentIntents.confirm(processor_payment_intent_id, { payment_method: 'pm_card_visa' });
    const paid = await until('the backend to hear of the payment', async () => {
      const attempt = await attempts.get(order.partner_reference);
      return attempt?.status === 'succeeded' ? attempt : undefined;
    });
    // and its reconciliation after the webhook done: one still running would read what a test does next (a refund)
    await backend.idle();
    return paid;
  }

  /** The backend's webhook logic over its own store and event log, holding one attempt, with the recorder's secret. */
  async function isolatedWebhooks(attempt: CheckoutAttempt) {
    const store = new InMemoryAttemptStore();
    await store.insertIfAbsent({ ...attempt, status: 'pending' });
    const webhooks = new PaymentWebhooks({ secret: recorderSecret, attempts: store, processedEvents: new InMemoryProcessedEvents() });
    return { store, webhooks };
  }

  it("POST /checkout gives the browser only client_secret, the publishable key and svc_tx_id, and keeps the spec's per-attempt record; the same order again replays", async () => {
    // Arrange
    const order = newOrder();

    // Act
    const first = await checkoutAt(backend, order.partner_reference);
    const stored = await attempts.get(order.partner_reference);
    const again = await checkoutAt(backend, order.partner_reference);
    // The shop changes the order's price within the service's window: the same key with other bytes
    orders.put({ ...order, amount: 50 });
    const changed = await checkoutAt(backend, order.partner_reference);

    // Assert: the browser's answer
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      partner_reference: order.partner_reference,
      svc_tx_id: stored?.svc_tx_id,
      client_secret: expect.stringMatching(/^pi_\w+_secret_/),
      processor_publishable_key: expect.stringMatching(/^pk_/),
    });
    // Assert: the record, exactly the spec's fields plus the status and when it was made
    expect(stored).toEqual({
      partner_reference: order.partner_reference,
      idempotency_key: `checkout-${order.partner_reference}`,
      svc_tx_id: expect.stringMatching(/^svc_tx_[0-9a-z]{24}$/),
      processor_payment_intent_id: expect.stringMatching(/^pi_/),
      statement_descriptor_suffix: 'ORDER 8841',
      status: 'pending',
      created_at: expect.any(String),
    });
    expect(Math.abs(Date.now() - Date.parse(stored?.created_at ?? ''))).toBeLessThan(60_000);
    expect(first.body.client_secret.startsWith(`${stored?.processor_payment_intent_id}_secret_`)).toBe(true);
    // Assert: the service's record names the same payment, at the order's price
    const transaction = await service.getTransaction(stored?.svc_tx_id ?? '');
    expect(transaction).toMatchObject({ partnerReference: order.partner_reference, processorPaymentIntentId: stored?.processor_payment_intent_id, status: 'pending', amount: 12.34, currency: 'USD', clientId });
    // Assert: asking again replays; another price under the same reference is the service's 422
    expect(again).toEqual(first);
    expect(changed.status).toBe(422);
    expect(changed.body).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
    expect(await attempts.get(order.partner_reference)).toEqual(stored);
    expect((await service.listTransactions({ partner_reference: order.partner_reference })).items).toHaveLength(1);
  });

  it("takes the price from the server's order, never from the browser; an order the shop does not have is 404 and makes no payment", async () => {
    // Arrange
    const order = newOrder();
    const unknownReference = `order-${randomUUID()}`;

    // Act: a buyer edits the request
    const tampered = await checkoutAt(backend, order.partner_reference, { amount: 0.01, currency: 'EUR', client_id: 'merchant-of-my-choice', email: 'someone@example.com' });
    const unknown = await checkoutAt(backend, unknownReference, { client_id: clientId, amount: 1, currency: 'USD', email: 'buyer@example.com' });

    // Assert
    expect(tampered.status).toBe(201);
    const stored = (await attempts.get(order.partner_reference)) as CheckoutAttempt;
    expect(await service.getTransaction(stored.svc_tx_id)).toMatchObject({ amount: 12.34, currency: 'USD', clientId, partnerReference: order.partner_reference });
    expect(unknown).toEqual({ status: 404, body: { error: 'No such order' } });
    expect((await service.listTransactions({ partner_reference: unknownReference })).items).toEqual([]);
  });

  it('reads its own attempt record before the service: an order whose attempt is past the idempotency window is 409 ORDER_HAS_PAYMENT, and no second payment is made', async () => {
    // Arrange: an order paid for 25 hours ago; the service has since dropped that checkout's idempotency key
    // (here: it never saw it), so sending `checkout-<partner_reference>` again would create a new payment
    const order = newOrder();
    const yesterdays: CheckoutAttempt = {
      partner_reference: order.partner_reference,
      idempotency_key: idempotencyKeys.checkout(order.partner_reference),
      svc_tx_id: `svc_tx_${'0'.repeat(24)}`,
      processor_payment_intent_id: 'pi_from_yesterday',
      statement_descriptor_suffix: 'ORDER 8841',
      status: 'pending',
      created_at: new Date(Date.now() - 25 * 60 * 60 * 1000).toISOString(),
    };
    await attempts.insertIfAbsent(yesterdays);

    // Act
    const again = await checkoutAt(backend, order.partner_reference);

    // Assert
    expect(again).toEqual({ status: 409, body: { error: 'This order already has a payment; use a new partner_reference', code: 'ORDER_HAS_PAYMENT' } });
    expect((await service.listTransactions({ partner_reference: order.partner_reference })).items).toEqual([]);
    expect(await attempts.get(order.partner_reference)).toEqual(yesterdays);
  });

  it('a payment confirmed in the browser: the service delivers transaction_succeeded, the backend verifies it, moves the order and answers 2xx', async () => {
    // Act
    const attempt = await paidOrder();

    // Assert: the store moved (only the webhook path writes it here: GET /orders was not called)
    expect(attempt.status).toBe('succeeded');
    const [delivery] = await until('the delivery to the backend to finish', async () => {
      const found = await backendDeliveries(attempt.svc_tx_id);
      return found.length === 1 && found[0]?.status !== 'pending' ? found : undefined;
    });
    expect(delivery).toMatchObject({ event: 'transaction_succeeded', status: 'succeeded', attempts: 1, last_http_status: 200 });
    expect(await getOrder(attempt.partner_reference)).toEqual({ status: 200, body: { partner_reference: attempt.partner_reference, svc_tx_id: attempt.svc_tx_id, status: 'succeeded' } });
  });

  it('answers a verified webhook at once while the service is slow to read, then converges: the event is stored, answered 200, and reconciled afterwards', async () => {
    // Arrange: a backend whose reads of the service hang until released; the payment is refunded at the service
    const reads = new GatedReads({ baseUrl: api.baseUrl, apiKey: partner.apiKey, hmacSecret: partner.hmacSecret });
    const slowAttempts = new InMemoryAttemptStore();
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const slow = await startPartnerBackend({ port: 0, partnerId: partner.partnerId, service: reads, webhookSecret: secret, orders, attempts: slowAttempts });
    try {
      const order = newOrder();
      expect((await checkoutAt(slow, order.partner_reference)).status).toBe(201);
      const attempt = (await slowAttempts.get(order.partner_reference)) as CheckoutAttempt;
      await stripe.paymentIntents.confirm(attempt.processor_payment_intent_id, { payment_method: 'pm_card_visa' });
      const delivered = await recordedOnce(attempt.svc_tx_id, 'transaction_succeeded');
      await stripe.refunds.create({ payment_intent: attempt.processor_payment_intent_id });
      await until('the service to record the refund', async () => ((await service.getTransaction(attempt.svc_tx_id)).status === 'refunded' ? true : undefined));

      // Act: the service's transaction_succeeded, byte for byte, signed for this backend's endpoint
      const started = performance.now();
      const headers = signedAt(secret, String(delivered.headers['webhook-id']), delivered.body, new Date());
      const answer = await post(`${slow.url}/webhooks/payments`, delivered.body, headers, AbortSignal.timeout(5_000));
      const answeredInMs = performance.now() - started;
      await until('the reconciliation to ask the service', () => (reads.reads.length > 0 ? true : undefined));
      const storedWhileReading = (await slowAttempts.get(order.partner_reference))?.status;
      reads.open();
      const converged = await until('the reconciliation to move the order', async () => {
        const status = (await slowAttempts.get(order.partner_reference))?.status;
        return status === 'refunded' ? status : undefined;
      });

      // Assert
      expect(answer).toEqual({ status: 200, body: { received: true } });
      expect(answeredInMs).toBeLessThan(1_000); // the service allows 10 s
      expect(storedWhileReading).toBe('succeeded');
      expect(reads.reads).toEqual([attempt.svc_tx_id]);
      expect(converged).toBe('refunded');
    } finally {
      reads.open();
      await slow.close();
    }
  }, 30_000);

  it("verifies the service's own request with the endpoint's secret; a changed body, a changed signature or another endpoint's secret are refused, and the backend answers 400", async () => {
    // Arrange: the exact request the service sent the recorder
    const attempt = await paidOrder();
    const request = await recordedOnce(attempt.svc_tx_id, 'transaction_succeeded');
    const { webhooks } = await isolatedWebhooks(attempt);
    const headers = request.headers;
    const tamperedBody = request.body.replace('"amount":12.34', '"amount":0.01');
    const forgedSignature = { ...headers, 'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}` };

    // Act
    const verified = webhooks.verify(request.body, headers);

    // Assert
    expect(verified).toEqual({ eventId: headers['webhook-id'], event: JSON.parse(request.body) });
    expect(verified.event).toMatchObject({ event: 'transaction_succeeded', svc_tx_id: attempt.svc_tx_id, partner_reference: attempt.partner_reference, status: 'succeeded', amount: 12.34 });
    expect(tamperedBody).not.toBe(request.body);
    expect(() => webhooks.verify(tamperedBody, headers)).toThrow(WebhookVerificationError);
    expect(() => webhooks.verify(request.body, forgedSignature)).toThrow(WebhookVerificationError);
    // The backend's endpoint has its own secret: the recorder's request is not valid there
    const asSent = Object.fromEntries(Object.entries(headers).filter(([name]) => name.startsWith('webhook-')).map(([name, value]) => [name, String(value)]));
    expect(await postToBackend('/webhooks/payments', request.body, { 'content-type': 'application/json', ...asSent })).toEqual({ status: 400, body: { error: 'Invalid signature, or not a payment event' } });
    expect(await postToBackend('/webhooks/payments', request.body, { 'content-type': 'application/json' })).toEqual({ status: 400, body: { error: 'Invalid signature, or not a payment event' } });
  });

  it('refuses (400) a webhook signed with its secret whose body is not a payment event, and changes nothing', async () => {
    const bodies = ['null', '[]', '{"svc_tx_id":42,"status":"succeeded"}', '{"svc_tx_id":"svc_tx_x","status":"paid"}'];

    const answers = await Promise.all(bodies.map((body, i) => postToBackend('/webhooks/payments', body, signedAt(backendSecret, `msg_odd_${i}_${randomUUID()}`, body, new Date()))));

    expect(answers.map((answer) => [answer.status, answer.body.error])).toEqual(bodies.map(() => [400, 'Invalid signature, or not a payment event']));
  });

  it('refuses a delivered webhook re-signed 301 s in the past or more than 300 s ahead (Standard Webhooks tolerance: 300 s); 290 s old still verifies', async () => {
    // Arrange: the service's request, re-signed with a correct signature over another timestamp
    const attempt = await paidOrder();
    const request = await recordedOnce(attempt.svc_tx_id, 'transaction_succeeded');
    const eventId = String(request.headers['webhook-id']);
    const { webhooks } = await isolatedWebhooks(attempt);
    /** Signed `offsetSeconds` from now. (Ahead: 305 s, so a second ticking over before the check cannot bring it within 300 s.) */
    const resigned = (secret: string, offsetSeconds: number) => signedAt(secret, eventId, request.body, new Date(Date.now() + offsetSeconds * 1000));
    const verdict = (offsetSeconds: number) => {
      try {
        webhooks.verify(request.body, resigned(recorderSecret, offsetSeconds));
        return 'verified';
      } catch (error) {
        return error instanceof WebhookVerificationError ? `refused: ${error.message}` : error;
      }
    };

    // Act
    const verdicts = { stale: verdict(-301), ahead: verdict(305), recent: verdict(-290) };
    const staleAtBackend = await postToBackend('/webhooks/payments', request.body, resigned(backendSecret, -301));
    const aheadAtBackend = await postToBackend('/webhooks/payments', request.body, resigned(backendSecret, 305));
    const recentAtBackend = await postToBackend('/webhooks/payments', request.body, resigned(backendSecret, -290));

    // Assert
    expect(verdicts).toEqual({ stale: 'refused: Message timestamp too old', ahead: 'refused: Message timestamp too new', recent: 'verified' });
    expect(staleAtBackend).toEqual({ status: 400, body: { error: 'Invalid signature, or not a payment event' } });
    expect(aheadAtBackend).toEqual({ status: 400, body: { error: 'Invalid signature, or not a payment event' } });
    expect(recentAtBackend).toEqual({ status: 200, body: { received: true } });
  });

  it("processes an event once: a repeat, and the service's resend of it (same event id), are acknowledged and change nothing", async () => {
    // Arrange
    const attempt = await paidOrder();
    const request = await recordedOnce(attempt.svc_tx_id, 'transaction_succeeded');
    const { store, webhooks } = await isolatedWebhooks(attempt);

    // Act: the delivery, then the same request again
    const first = await webhooks.receive(request.body, request.headers);
    const repeat = await webhooks.receive(request.body, request.headers);
    // Act: an admin resends the delivery: the same event id and body, a fresh timestamp and signature
    const [delivery] = (await api.admin('GET', `/admin/partners/${partner.partnerId}/webhook-deliveries?limit=200`)).body.items.filter(
      (item: Record<string, any>) => item.svc_tx_id === attempt.svc_tx_id && item.endpoint_id !== backendEndpointId,
    );
    expect((await api.admin('POST', `/admin/webhook-deliveries/${delivery.id}/resend`)).status).toBe(202);
    const resent = await until('the resent request', () => recorded(attempt.svc_tx_id, 'transaction_succeeded')[1]);
    const afterResend = await webhooks.receive(resent.body, resent.headers);

    // Assert
    expect(first).toEqual({ outcome: 'processed', attempt: { ...attempt, status: 'succeeded' } });
    expect(repeat).toEqual({ outcome: 'duplicate' });
    expect(resent.headers['webhook-id']).toBe(request.headers['webhook-id']);
    expect(resent.body).toBe(request.body);
    expect(afterResend).toEqual({ outcome: 'duplicate' });
    expect((await store.get(attempt.partner_reference))?.status).toBe('succeeded');
    // Assert: a payment it has no attempt for is acknowledged
    const strangers = new PaymentWebhooks({ secret: recorderSecret, attempts: new InMemoryAttemptStore(), processedEvents: new InMemoryProcessedEvents() });
    expect(await strangers.receive(request.body, request.headers)).toEqual({ outcome: 'unknown_transaction' });
  });

  it('never moves an order back: a late transaction_succeeded after transaction_refunded, or a reconciliation reading an earlier status, leaves it refunded', async () => {
    // Arrange: a payment refunded at the processor; the recorder holds both of the service's webhooks
    const attempt = await paidOrder();
    await stripe.refunds.create({ payment_intent: attempt.processor_payment_intent_id });
    const refunded = await recordedOnce(attempt.svc_tx_id, 'transaction_refunded');
    const succeeded = await recordedOnce(attempt.svc_tx_id, 'transaction_succeeded');
    const { store, webhooks } = await isolatedWebhooks(attempt);
    const laggingRead = { getTransaction: async (svcTxId: string) => ({ ...(await service.getTransaction(svcTxId)), status: 'succeeded' as const }) };

    // Act: the refund first, then the late success, then a read that is behind
    const refundedFirst = await webhooks.receive(refunded.body, refunded.headers);
    const lateSuccess = await webhooks.receive(succeeded.body, succeeded.headers);
    const lagging = await reconcile({ attempts: store, service: laggingRead }, attempt);

    // Assert
    expect(refundedFirst).toEqual({ outcome: 'processed', attempt: { ...attempt, status: 'refunded' } });
    expect(lateSuccess).toEqual({ outcome: 'processed', attempt: { ...attempt, status: 'refunded' } });
    expect(lagging.status).toBe('refunded');
  });

  describe('with a shop and the checkout page', () => {
    let shopBackend: PartnerBackend;
    const get = (path: string) => fetch(`${shopBackend.url}${path}`);
    const json = async (response: Response) => ({ status: response.status, body: (await response.json()) as Record<string, any> });

    beforeAll(async () => {
      const shopOrders = new InMemoryOrders();
      shopBackend = await startPartnerBackend({
        port: 0,
        partnerId: partner.partnerId,
        service,
        webhookSecret: backendSecret,
        orders: shopOrders,
        shop: new Shop([{ sku: 'mug', name: 'Mug', client_id: clientId, amount: 9.5, currency: 'USD' }], shopOrders),
        frontend: { processorJsUrl: 'http://127.0.0.1:12111/v3/' },
      });
    });
    afterAll(() => shopBackend?.close());

    it('GET /products lists what is for sale, without the merchant; POST /orders prices a new order on the server, whatever the browser sends', async () => {
      const products = await json(await get('/products'));
      const created = await post(`${shopBackend.url}/orders`, JSON.stringify({ sku: 'mug', amount: 0.01, currency: 'JPY', email: 'ada@example.com' }));
      const again = await post(`${shopBackend.url}/orders`, JSON.stringify({ sku: 'mug' }));
      const refusals = await Promise.all([
        post(`${shopBackend.url}/orders`, JSON.stringify({ sku: 'nothing' })),
        post(`${shopBackend.url}/orders`, JSON.stringify({ sku: 'mug', email: 'not an email' })),
        post(`${shopBackend.url}/orders`, JSON.stringify({})),
        post(`${shopBackend.url}/orders`, '[1]'),
        post(`${shopBackend.url}/orders`, JSON.stringify({ sku: 'mug', email: 'é@ü.example' })),
        // What a page of another site can send without a preflight: never read.
        post(`${shopBackend.url}/orders`, JSON.stringify({ sku: 'mug' }), { 'content-type': 'text/plain' }),
        post(`${shopBackend.url}/checkout`, JSON.stringify({ partner_reference: created.body.partner_reference }), { 'content-type': 'application/x-www-form-urlencoded' }),
      ]);

      expect(products).toEqual({ status: 200, body: { items: [{ sku: 'mug', name: 'Mug', amount: 9.5, currency: 'USD' }] } });
      expect(created).toEqual({ status: 201, body: { partner_reference: expect.stringMatching(/^order-[0-9a-z]+-[0-9a-f]{16}$/), name: 'Mug', amount: 9.5, currency: 'USD' } });
      expect(again.body.partner_reference).not.toBe(created.body.partner_reference);
      expect(refusals.map((refusal) => refusal.status)).toEqual([404, 400, 400, 400, 400, 415, 415]);
    });

    it('GET /payments/{svc_tx_id} reconciles a payment this backend started with the service; any other id is 404', async () => {
      const order = await post(`${shopBackend.url}/orders`, JSON.stringify({ sku: 'mug' }));
      const checkout = await post(`${shopBackend.url}/checkout`, JSON.stringify({ partner_reference: order.body.partner_reference }));
      const pending = await json(await get(`/payments/${checkout.body.svc_tx_id}`));
      await stripe.paymentIntents.confirm(String(checkout.body.client_secret).split('_secret_')[0] ?? '', { payment_method: 'pm_card_visa' });
      const succeeded = await until('the service to see the payment succeed', async () => {
        const read = await json(await get(`/payments/${checkout.body.svc_tx_id}`));
        return read.body.status === 'succeeded' ? read : undefined;
      });
      // Another partner's payment: the service would read it for nobody but its partner, and this backend never asks.
      const foreign = await json(await get('/payments/svc_tx_aaaaaaaaaaaaaaaaaaaaaaaa'));
      const malformed = await json(await get('/payments/%E0%A4%A'));

      expect(pending).toEqual({ status: 200, body: { partner_reference: order.body.partner_reference, svc_tx_id: checkout.body.svc_tx_id, status: 'pending' } });
      expect(succeeded.body.status).toBe('succeeded');
      expect([foreign.status, malformed.status]).toEqual([404, 404]);
    });

    it('answers 404 to a request target that is not a path (`//`), and keeps serving', async () => {
      const { port } = new URL(shopBackend.url);
      const raw = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () => socket.end('GET // HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
        let text = '';
        socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });

      expect(raw.split('\r\n')[0]).toBe('HTTP/1.1 404 Not Found');
      expect((await get('/products')).status).toBe(200);
    });

    it('GET /checkout serves the page with the processor library from its URL, under a CSP naming only this origin and the processor', async () => {
      const page = await get('/checkout');
      const html = await page.text();
      const script = await get('/checkout.js');

      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(html).toContain('<script src="http://127.0.0.1:12111/v3/"></script>');
      expect(page.headers.get('content-security-policy')).toBe(
        "default-src 'none'; script-src 'self' http://127.0.0.1:12111; connect-src 'self' http://127.0.0.1:12111; frame-src http://127.0.0.1:12111; " +
          "style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
      );
      expect([script.status, script.headers.get('content-type'), script.headers.get('x-content-type-options')]).toEqual([200, 'text/javascript; charset=utf-8', 'nosniff']);
      const head = await fetch(`${shopBackend.url}/checkout`, { method: 'HEAD' });
      expect([head.status, head.headers.get('content-type'), await head.text()]).toEqual([200, 'text/html; charset=utf-8', '']);
      // The backend without a frontend or a shop serves neither.
      const bare = await Promise.all([fetch(`${backend.url}/checkout`), fetch(`${backend.url}/products`)]);
      expect(bare.map((response) => response.status)).toEqual([404, 404]);
    });
  });

  it('GET /orders reconciles with the service: a refund the backend got no webhook for is read from GET /transactions/{svc_tx_id}', async () => {
    // Arrange: paid, then refunded at the processor (the backend's endpoint is subscribed to successes only)
    const attempt = await paidOrder();
    await stripe.refunds.create({ payment_intent: attempt.processor_payment_intent_id });
    await until('the service to record the refund', async () => ((await service.getTransaction(attempt.svc_tx_id)).status === 'refunded' ? true : undefined));
    const before = (await attempts.get(attempt.partner_reference))?.status;

    // Act
    const order = await getOrder(attempt.partner_reference);
    const unknown = await getOrder('order-never-checked-out');

    // Assert
    expect(before).toBe('succeeded');
    expect(order).toEqual({ status: 200, body: { partner_reference: attempt.partner_reference, svc_tx_id: attempt.svc_tx_id, status: 'refunded' } });
    expect((await attempts.get(attempt.partner_reference))?.status).toBe('refunded');
    expect(unknown.status).toBe(404);
  });
});

/** A client whose reads wait until `open()`: the service slow to answer `GET /transactions/{svc_tx_id}`. */
class GatedReads extends ServiceClient {
  readonly reads: string[] = [];
  private release: () => void = () => undefined;
  private readonly gate = new Promise<void>((resolve) => {
    this.release = resolve;
  });

  open(): void {
    this.release();
  }

  override async getTransaction(svcTxId: string): Promise<example.Transaction> {
    this.reads.push(svcTxId);
    await this.gate;
    return super.getTransaction(svcTxId);
  }
}
