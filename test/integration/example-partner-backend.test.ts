/**
 * The example partner backend (examples/partner-backend) against the real local service: its client's signatures
 * and idempotency keys, its attempt records, and its webhook receiver fed by the service's own delivery pipeline.
 *
 * The world is webhooks-end-to-end.test.ts's: a sandbox processor whose signed events go to this file's HTTP API,
 * the processor webhook, the stream relay, the local queue and the real delivery consumer, against a table of
 * this file's own (the pipeline would otherwise deliver other files' deliveries). The example backend runs on
 * 127.0.0.1 as a registered webhook endpoint; a second endpoint, a recording receiver, keeps the raw requests the
 * service sends, so the example's verifier can be held to them byte for byte.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebhookVerificationError } from 'standardwebhooks';
import { type CheckoutAttempt, InMemoryAttemptStore } from '../../examples/partner-backend/src/attempts';
import { type PartnerBackend, startPartnerBackend } from '../../examples/partner-backend/src/server';
import { type CheckoutRequest, idempotencyKeys, ServiceApiError, ServiceClient, signBody } from '../../examples/partner-backend/src/service-client';
import { InMemoryProcessedEvents, PaymentWebhooks } from '../../examples/partner-backend/src/webhooks';
import type { PartnerCredentials, TestApi as TestApiType } from '../support/api';
import { until, useDeliveryWorld } from '../support/delivery-world';
import { freePort } from '../support/ports';
import { WebhookReceiver } from '../support/webhook-receiver';

const world = await useDeliveryWorld('example');
const { stripe } = world;

let api: TestApiType;
beforeAll(() => {
  api = world.api();
});

// ---------------------------------------------------------------------------------------------------------
// Helpers

const clientFor = (partner: PartnerCredentials, options: { hmacSecret?: string; onRetry?: ConstructorParameters<typeof ServiceClient>[0]['onRetry'] } = {}) =>
  new ServiceClient({ baseUrl: api.baseUrl, apiKey: partner.apiKey, hmacSecret: options.hmacSecret ?? partner.hmacSecret, onRetry: options.onRetry });

const checkoutRequest = (partner: PartnerCredentials, clientId: string, overrides: Partial<CheckoutRequest> = {}): CheckoutRequest => ({
  partner_id: partner.partnerId,
  client_id: clientId,
  amount: 12.34,
  currency: 'USD',
  email: 'buyer@example.com',
  partner_reference: `order-${randomUUID()}`,
  ...overrides,
});

async function expectServiceError(promise: Promise<unknown>, status: number, code: string): Promise<ServiceApiError> {
  const error = await promise.catch((thrown: unknown) => thrown);
  expect(error).toBeInstanceOf(ServiceApiError);
  expect({ status: (error as ServiceApiError).status, code: (error as ServiceApiError).code }).toEqual({ status, code });
  return error as ServiceApiError;
}

// ---------------------------------------------------------------------------------------------------------

describe('service-client against the local service', () => {
  let partner: PartnerCredentials;
  let clientId: string;

  beforeAll(async () => {
    partner = await api.createPartner();
    clientId = await api.createClient(partner);
  });

  it('signs mutations the service accepts; with a wrong HMAC secret the answer is 401 HMAC_INVALID, thrown typed and not retried', async () => {
    // Arrange
    const retries: string[] = [];
    const wrongSecret = clientFor(partner, { hmacSecret: 'svc_hmac_not_this_partners', onRetry: ({ code }) => retries.push(code) });
    const merchantId = `merchant-${randomUUID().slice(0, 12)}`;

    // Act
    const created = await clientFor(partner).createClient({ client_id: merchantId, legal_name: 'Merchant Two Ltd' });
    const refused = wrongSecret.createClient({ client_id: `merchant-${randomUUID().slice(0, 12)}`, legal_name: 'Merchant Three Ltd' });

    // Assert
    expect(created).toMatchObject({ partner_id: partner.partnerId, client_id: merchantId, legal_name: 'Merchant Two Ltd', status: 'active' });
    expect(created.idempotentReplay).toBeUndefined();
    await expectServiceError(refused, 401, 'HMAC_INVALID');
    expect(retries).toEqual([]);
  });

  it('replays a checkout: the same key and body name the same svc_tx_id (idempotentReplay); another body under the key is 422 IDEMPOTENCY_KEY_REUSED', async () => {
    // Arrange
    const client = clientFor(partner);
    const request = checkoutRequest(partner, clientId, { statement_descriptor_suffix: 'ORDER 1' });

    // Act
    const first = await client.checkoutIntent(request);
    const again = await client.checkoutIntent(request);
    const changed = client.checkoutIntent({ ...request, amount: 99.99 });

    // Assert
    expect(first).toEqual({
      svc_tx_id: expect.stringMatching(/^svc_tx_[0-9a-z]{24}$/),
      status: 'pending',
      processor_payment_intent_id: expect.stringMatching(/^pi_/),
      client_secret: expect.stringMatching(/^pi_\w+_secret_/),
      processor_publishable_key: expect.stringMatching(/^pk_/),
    });
    expect(again).toEqual({ ...first, idempotentReplay: true });
    await expectServiceError(changed, 422, 'IDEMPOTENCY_KEY_REUSED');
    const page = await client.listTransactions({ partner_reference: request.partner_reference });
    expect(page.items.map((transaction) => transaction.svcTxId)).toEqual([first.svc_tx_id]);
  });

  /** Whether a copy meets the key in use depends on timing; the scripted service below pins that retry exactly. */
  it('sends the same checkout three times at once: one payment and two replays, whatever the timing (a copy finding the key in use retries)', async () => {
    // Arrange
    const retried: string[] = [];
    const client = clientFor(partner, { onRetry: ({ code }) => retried.push(code) });
    const request = checkoutRequest(partner, clientId);

    // Act
    const answers = await Promise.all([client.checkoutIntent(request), client.checkoutIntent(request), client.checkoutIntent(request)]);

    // Assert
    expect(new Set(answers.map((answer) => answer.svc_tx_id)).size).toBe(1);
    expect(answers.filter((answer) => answer.idempotentReplay !== true)).toHaveLength(1);
    expect(retried.every((code) => code === 'IDEMPOTENCY_KEY_IN_USE')).toBe(true);
    expect((await client.listTransactions({ partner_reference: request.partner_reference })).items).toHaveLength(1);
  });

  it('derives a key the service accepts for a partner_reference a header cannot carry (non-ASCII), and replays under it', async () => {
    // Arrange: the spec's `checkout-<partner_reference>` would not be printable ASCII
    const client = clientFor(partner);
    const request = checkoutRequest(partner, clientId, { partner_reference: `commande-é-🛒-${randomUUID()}` });

    // Act
    const first = await client.checkoutIntent(request);
    const again = await client.checkoutIntent(request);

    // Assert
    expect(idempotencyKeys.checkout(request.partner_reference)).toMatch(/^checkout-sha256-[0-9a-f]{64}$/);
    expect(idempotencyKeys.checkout('order-8841')).toBe('checkout-order-8841');
    expect(again).toEqual({ ...first, idempotentReplay: true });
    expect((await client.getTransaction(first.svc_tx_id)).partnerReference).toBe(request.partner_reference);
  });

  it('runs the legacy flow: initialize (init-<partner_reference>), then attach-intent (attach-<svc_tx_id>), each replaying', async () => {
    // Arrange
    const client = clientFor(partner);
    const { email: _email, ...initializeRequest } = checkoutRequest(partner, clientId, { amount: 15 });

    // Act
    const initialized = await client.initialize(initializeRequest);
    const intent = await stripe.paymentIntents.create({ amount: 1500, currency: 'usd', automatic_payment_methods: { enabled: true } });
    const attached = await client.attachIntent({ svc_tx_id: initialized.svc_tx_id, processor_payment_intent_id: intent.id });
    const attachedAgain = await client.attachIntent({ svc_tx_id: initialized.svc_tx_id, processor_payment_intent_id: intent.id });
    const initializedAgain = await client.initialize(initializeRequest);

    // Assert
    expect(initialized).toEqual({ svc_tx_id: expect.stringMatching(/^svc_tx_/), status: 'initialized' });
    expect(initializedAgain).toEqual({ ...initialized, idempotentReplay: true });
    expect(attached).toEqual({ svc_tx_id: initialized.svc_tx_id, status: 'pending', processor_payment_intent_id: intent.id });
    expect(attachedAgain).toEqual({ ...attached, idempotentReplay: true });
    expect(await client.getTransaction(initialized.svc_tx_id)).toMatchObject({ status: 'pending', processorPaymentIntentId: intent.id, amount: 15 });
  });

  it("reads one transaction and lists by filter; another partner's svc_tx_id is 404 TX_NOT_FOUND", async () => {
    // Arrange
    const client = clientFor(partner);
    const request = checkoutRequest(partner, clientId, { meta: { cart: 'c-1' } });
    const { svc_tx_id } = await client.checkoutIntent(request);
    const stranger = await api.createPartner();

    // Act
    const transaction = await client.getTransaction(svc_tx_id);
    const pending = await client.listTransactions({ status: 'pending', client_id: clientId, limit: 200 });
    const theirs = clientFor(stranger).getTransaction(svc_tx_id);

    // Assert
    expect(transaction).toMatchObject({ svcTxId: svc_tx_id, partnerId: partner.partnerId, clientId, partnerReference: request.partner_reference, amount: 12.34, currency: 'USD', status: 'pending', meta: { cart: 'c-1' } });
    expect(pending.items.map((item) => item.svcTxId)).toContain(svc_tx_id);
    expect(pending.items.every((item) => item.status === 'pending' && item.clientId === clientId)).toBe(true);
    await expectServiceError(theirs, 404, 'TX_NOT_FOUND');
  });
});

// ---------------------------------------------------------------------------------------------------------

/** A stand-in service that answers from a script, recording each request, for the client's retries exactly. */
class ScriptedService {
  readonly requests: Array<{ at: number; headers: IncomingHttpHeaders; body: string }> = [];

  private constructor(
    private readonly server: Server,
    private readonly script: Array<{ status: number; body: unknown; headers?: Record<string, string> }>,
  ) {}

  static async start(script: ScriptedService['script']): Promise<ScriptedService> {
    const server = createServer();
    const service = new ScriptedService(server, [...script]);
    server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        service.requests.push({ at: Date.now(), headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
        const answer = service.script.shift() ?? { status: 500, body: { error: 'script ran out', code: 'SCRIPT_EMPTY' } };
        response.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers }).end(JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return service;
  }

  get baseUrl() {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/api/v1`;
  }

  close = () => new Promise<void>((resolve) => this.server.close(() => resolve()));
}

describe('service-client retries (a scripted service)', () => {
  const created = { svc_tx_id: 'svc_tx_0123456789abcdefghijklmn', status: 'initialized' };
  const request = { partner_id: 'ptr_1', client_id: 'merchant-1', amount: 1, currency: 'USD', partner_reference: 'order-1' };

  it('retries 409 IDEMPOTENCY_KEY_IN_USE after its Retry-After and a 503 after a backoff, with the same key, body and signature', async () => {
    // Arrange
    const service = await ScriptedService.start([
      { status: 409, body: { error: 'in use', code: 'IDEMPOTENCY_KEY_IN_USE' }, headers: { 'retry-after': '1' } },
      { status: 503, body: { error: 'unavailable', code: 'SERVICE_UNAVAILABLE' } },
      { status: 201, body: created },
    ]);
    const retries: Array<{ code: string; delayMs: number }> = [];
    const client = new ServiceClient({ baseUrl: service.baseUrl, apiKey: 'svc_partner_k', hmacSecret: 'svc_hmac_s', onRetry: ({ code, delayMs }) => retries.push({ code, delayMs }) });

    // Act
    const answer = await client.initialize(request).finally(service.close);

    // Assert
    expect(answer).toEqual(created);
    expect(retries).toEqual([
      { code: 'IDEMPOTENCY_KEY_IN_USE', delayMs: 1000 },
      { code: 'SERVICE_UNAVAILABLE', delayMs: 500 }, // no Retry-After: 250 ms doubling, and this is the second retry
    ]);
    const [first, second, third] = service.requests;
    expect(service.requests).toHaveLength(3);
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(950);
    expect(first?.body).toBe(JSON.stringify(request));
    for (const sent of service.requests) {
      expect(sent.body).toBe(first?.body);
      expect(sent.headers['idempotency-key']).toBe('init-order-1');
      expect(sent.headers['x-svc-hmac']).toBe(signBody('svc_hmac_s', first?.body ?? ''));
      expect(sent.headers['x-api-key']).toBe('svc_partner_k');
    }
    expect(third?.headers['content-type']).toBe('application/json');
  });

  it('bounds the wait a Retry-After asks for and the number of tries, then throws the last answer typed', async () => {
    // Arrange
    const rateLimited = { status: 429, body: { error: 'Rate limit exceeded', code: 'RATE_LIMITED' }, headers: { 'retry-after': '60' } };
    const service = await ScriptedService.start([rateLimited, rateLimited, rateLimited]);
    const delays: number[] = [];
    const client = new ServiceClient({ baseUrl: service.baseUrl, apiKey: 'k', hmacSecret: 's', maxAttempts: 2, maxRetryDelayMs: 100, onRetry: ({ delayMs }) => delays.push(delayMs) });

    // Act
    const error = await expectServiceError(client.initialize(request).finally(service.close), 429, 'RATE_LIMITED');

    // Assert
    expect(error.retryAfterSeconds).toBe(60);
    expect(delays).toEqual([100]);
    expect(service.requests).toHaveLength(2);
  });

  it('does not retry an answer that would only repeat: 409 CLIENT_EXISTS, 422 IDEMPOTENCY_KEY_REUSED, 400 VALIDATION_ERROR (details kept)', async () => {
    // Arrange
    const details = { fieldErrors: { amount: ['Must be positive'] }, formErrors: [] };
    const service = await ScriptedService.start([
      { status: 409, body: { error: 'exists', code: 'CLIENT_EXISTS' } },
      { status: 422, body: { error: 'reused', code: 'IDEMPOTENCY_KEY_REUSED' } },
      { status: 400, body: { error: 'invalid', code: 'VALIDATION_ERROR', details } },
    ]);
    const client = new ServiceClient({ baseUrl: service.baseUrl, apiKey: 'k', hmacSecret: 's' });

    // Act
    await expectServiceError(client.createClient({ client_id: 'merchant-1', legal_name: 'Merchant' }), 409, 'CLIENT_EXISTS');
    await expectServiceError(client.initialize(request), 422, 'IDEMPOTENCY_KEY_REUSED');
    const invalid = await expectServiceError(client.initialize(request), 400, 'VALIDATION_ERROR').finally(service.close);

    // Assert
    expect(invalid.details).toEqual(details);
    expect(service.requests).toHaveLength(3);
  });

  it('sends again when no answer came at all (the same key makes that safe), then throws the network error', async () => {
    // Arrange: a port nothing listens on
    const retries: string[] = [];
    const client = new ServiceClient({ baseUrl: `http://127.0.0.1:${await freePort()}/api/v1`, apiKey: 'k', hmacSecret: 's', maxAttempts: 3, maxRetryDelayMs: 10, onRetry: ({ code }) => retries.push(code) });

    // Act
    const error = await client.initialize(request).catch((thrown: unknown) => thrown);

    // Assert
    expect(error).toMatchObject({ name: 'TypeError', message: 'fetch failed' }); // fetch's realm, not jest's: compared by name
    expect(retries).toEqual(['TypeError', 'TypeError']);
  });
});

// ---------------------------------------------------------------------------------------------------------

describe('the example backend, with the service delivering its webhooks', () => {
  const ALL_EVENTS = ['transaction_succeeded', 'transaction_failed', 'transaction_abandoned', 'transaction_refunded', 'transaction_chargeback'];
  let partner: PartnerCredentials;
  let clientId: string;
  let service: ServiceClient;
  let attempts: InMemoryAttemptStore;
  let backend: PartnerBackend;
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
    recorder = await WebhookReceiver.start();
    recorderSecret = (await createEndpoint(recorder.url('/recorder'), ALL_EVENTS)).secret;
    // The backend hears of successes only: any later status it knows comes from reconciling with the service.
    const backendPort = await freePort();
    const backendEndpoint = await createEndpoint(`http://127.0.0.1:${backendPort}/webhooks/payments`, ['transaction_succeeded']);
    backendEndpointId = backendEndpoint.id;
    backend = await startPartnerBackend({ port: backendPort, partnerId: partner.partnerId, service, webhookSecret: backendEndpoint.secret, attempts });
  });
  afterAll(async () => {
    await backend?.close();
    await recorder?.close();
  });

  const postToBackend = (path: string, body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
    fetch(`${backend.url}${path}`, { method: 'POST', headers, body }).then(async (response) => ({ status: response.status, body: (await response.json()) as Record<string, any> }));

  const getOrder = (partnerReference: string) =>
    fetch(`${backend.url}/orders/${encodeURIComponent(partnerReference)}`).then(async (response) => ({ status: response.status, body: (await response.json()) as Record<string, any> }));

  const newOrder = () => ({
    partner_reference: `order-${randomUUID()}`,
    client_id: clientId,
    amount: 12.34,
    currency: 'USD',
    email: 'buyer@example.com',
    statement_descriptor_suffix: 'ORDER 8841',
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
    const checkout = await postToBackend('/checkout', JSON.stringify(order));
    if (checkout.status !== 201) throw new Error(`checkout failed: ${JSON.stringify(checkout.body)}`);
    const { processor_payment_intent_id } = (await attempts.get(order.partner_reference)) as CheckoutAttempt;
    await stripe.paymentIntents.confirm(processor_payment_intent_id, { payment_method: 'pm_card_visa' });
    return until('the backend to hear of the payment', async () => {
      const attempt = await attempts.get(order.partner_reference);
      return attempt?.status === 'succeeded' ? attempt : undefined;
    });
  }

  /** The backend's webhook logic over its own store and event log, holding one attempt, reading the service through `reader`. */
  async function isolatedWebhooks(attempt: CheckoutAttempt, reader: Pick<ServiceClient, 'getTransaction'> = service) {
    const store = new InMemoryAttemptStore();
    await store.insertIfAbsent({ ...attempt, status: 'pending' });
    const webhooks = new PaymentWebhooks({ secret: recorderSecret, attempts: store, processedEvents: new InMemoryProcessedEvents(), service: reader });
    return { store, webhooks };
  }

  it("POST /checkout gives the browser only client_secret and the publishable key, and keeps the spec's per-attempt record; the same order again replays", async () => {
    // Arrange
    const order = newOrder();

    // Act
    const first = await postToBackend('/checkout', JSON.stringify(order));
    const stored = await attempts.get(order.partner_reference);
    // The same order with its fields in another order: the backend still sends the same bytes
    const again = await postToBackend('/checkout', JSON.stringify(Object.fromEntries(Object.entries(order).reverse())));
    const changed = await postToBackend('/checkout', JSON.stringify({ ...order, amount: 50 }));

    // Assert: the browser's answer
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ partner_reference: order.partner_reference, client_secret: expect.stringMatching(/^pi_\w+_secret_/), processor_publishable_key: expect.stringMatching(/^pk_/) });
    // Assert: the record, exactly the spec's fields plus the status
    expect(stored).toEqual({
      partner_reference: order.partner_reference,
      idempotency_key: `checkout-${order.partner_reference}`,
      svc_tx_id: expect.stringMatching(/^svc_tx_[0-9a-z]{24}$/),
      processor_payment_intent_id: expect.stringMatching(/^pi_/),
      statement_descriptor_suffix: 'ORDER 8841',
      status: 'pending',
    });
    expect(first.body.client_secret.startsWith(`${stored?.processor_payment_intent_id}_secret_`)).toBe(true);
    // Assert: the service's record names the same payment
    const transaction = await service.getTransaction(stored?.svc_tx_id ?? '');
    expect(transaction).toMatchObject({ partnerReference: order.partner_reference, processorPaymentIntentId: stored?.processor_payment_intent_id, status: 'pending' });
    // Assert: asking again replays; another amount under the same reference is the service's 422
    expect(again).toEqual(first);
    expect(changed.status).toBe(422);
    expect(changed.body).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
    expect(await attempts.get(order.partner_reference)).toEqual(stored);
    expect((await service.listTransactions({ partner_reference: order.partner_reference })).items).toHaveLength(1);
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
    expect(await postToBackend('/webhooks/payments', request.body, { 'content-type': 'application/json', ...asSent })).toEqual({ status: 400, body: { error: 'Invalid signature' } });
    expect(await postToBackend('/webhooks/payments', request.body, { 'content-type': 'application/json' })).toEqual({ status: 400, body: { error: 'Invalid signature' } });
  });

  it("processes an event once: a repeat, and the service's resend of it (same event id), are acknowledged without reading the service again", async () => {
    // Arrange
    const attempt = await paidOrder();
    const request = await recordedOnce(attempt.svc_tx_id, 'transaction_succeeded');
    const reads: string[] = [];
    const { store, webhooks } = await isolatedWebhooks(attempt, { getTransaction: (svcTxId) => (reads.push(svcTxId), service.getTransaction(svcTxId)) });

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
    expect(reads).toEqual([attempt.svc_tx_id]);
    expect((await store.get(attempt.partner_reference))?.status).toBe('succeeded');
    // Assert: a payment it has no attempt for is acknowledged, and nothing is read
    const strangers = new PaymentWebhooks({ secret: recorderSecret, attempts: new InMemoryAttemptStore(), processedEvents: new InMemoryProcessedEvents(), service: { getTransaction: () => Promise.reject(new Error('not to be read')) } });
    expect(await strangers.receive(request.body, request.headers)).toEqual({ outcome: 'unknown_transaction' });
  });

  it('never moves an order back: a late transaction_succeeded after transaction_refunded leaves it refunded, even while the service cannot be read', async () => {
    // Arrange: a payment refunded at the processor; the recorder holds both of the service's webhooks
    const attempt = await paidOrder();
    await stripe.refunds.create({ payment_intent: attempt.processor_payment_intent_id });
    const refunded = await recordedOnce(attempt.svc_tx_id, 'transaction_refunded');
    const succeeded = await recordedOnce(attempt.svc_tx_id, 'transaction_succeeded');
    const unreachable = new ServiceClient({ baseUrl: `http://127.0.0.1:${await freePort()}/api/v1`, apiKey: 'k', hmacSecret: 's', maxAttempts: 1 });
    const { store, webhooks } = await isolatedWebhooks(attempt, unreachable);

    // Act: the refund first, then the late success; the reconciling read fails each time (the receiver would answer 503)
    const refundedFirst = await webhooks.receive(refunded.body, refunded.headers).catch((error: unknown) => error);
    const afterRefund = (await store.get(attempt.partner_reference))?.status;
    const lateSuccess = await webhooks.receive(succeeded.body, succeeded.headers).catch((error: unknown) => error);
    const afterLateSuccess = (await store.get(attempt.partner_reference))?.status;
    // Act: the service retries the late success once it can be read
    const withService = new PaymentWebhooks({ secret: recorderSecret, attempts: store, processedEvents: new InMemoryProcessedEvents(), service });
    const retried = await withService.receive(succeeded.body, succeeded.headers);

    // Assert
    // (fetch's errors come from outside jest's realm: compared by name)
    expect(refundedFirst).toMatchObject({ name: 'TypeError', message: 'fetch failed' });
    expect(lateSuccess).toMatchObject({ name: 'TypeError', message: 'fetch failed' });
    expect(afterRefund).toBe('refunded');
    expect(afterLateSuccess).toBe('refunded');
    expect(retried).toEqual({ outcome: 'processed', attempt: { ...attempt, status: 'refunded' } });
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
