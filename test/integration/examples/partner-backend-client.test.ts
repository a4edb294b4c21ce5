/**
 * The example partner backend's client (examples/partner-backend/src/service-client.ts): against the real local
 * service, its signatures, idempotency keys and replays, the legacy initialize/attach-intent flow and its reads;
 * against a scripted stand-in service, its retries exactly (which answers it retries, after how long, how often,
 * with the same key, body and signature) and the typed errors it throws when it gives up.
 *
 * The world is a delivery world of this file's own (test/support/delivery-world.ts): a sandbox processor whose
 * signed events go to this file's HTTP API, against a table of this file's own. The example backend and its
 * webhooks are partner-backend-server.test.ts's; its copies of the service's definitions,
 * partner-backend-copies.test.ts's.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { idempotencyKeys, ServiceApiError, ServiceClient, signBody } from '../../../examples/partner-backend/src/service-client';
import type { PartnerCredentials, TestApi as TestApiType } from '../../support/api';
import { useDeliveryWorld } from '../../support/delivery-world';
import { checkoutRequest, serviceClientFor } from '../../support/example-backend';
import { freePort } from '../../support/ports';

const world = await useDeliveryWorld('example-client');
const { stripe } = world;

let api: TestApiType;
beforeAll(() => {
  api = world.api();
});
const clientFor = serviceClientFor(world);

// ---------------------------------------------------------------------------------------------------------
// Helpers

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

  it('sends again when no answer came at all (the same key makes that safe), then throws ServiceUnreachableError with the network error as cause', async () => {
    // Arrange: a port nothing listens on
    const retries: string[] = [];
    const client = new ServiceClient({ baseUrl: `http://127.0.0.1:${await freePort()}/api/v1`, apiKey: 'k', hmacSecret: 's', maxAttempts: 3, maxRetryDelayMs: 10, onRetry: ({ code }) => retries.push(code) });

    // Act
    const error = await client.initialize(request).catch((thrown: unknown) => thrown);

    // Assert
    expect(error).toMatchObject({ name: 'ServiceUnreachableError', cause: { name: 'TypeError', message: 'fetch failed' } }); // fetch's realm, not jest's: compared by name
    expect(retries).toEqual(['TypeError', 'TypeError']);
  });
});
