/**
 * The one-call flow end to end: the service creates the intent at the sandbox processor through the real
 * stripe SDK; confirming it in the sandbox emits a signed event that the SDK's own verifier accepts.
 * This file runs the service against a sandbox of its own, whose events reach a recorder here.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import Stripe from 'stripe';
import { type Processor, ProcessorRefusedParameter } from '../../../lib/use-cases/ports/processor';
import { startProcessorSandbox, type ProcessorSandbox } from '../../../infra/local/sandbox/processor';
import { freePort } from '../../support/ports';

const SECRET_KEY = 'sk_test_checkout_suite';
const WEBHOOK_SECRET = 'whsec_checkout_suite';

const received: Array<{ body: string; signature: string | undefined }> = [];
const receiver: Server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    received.push({ body: Buffer.concat(chunks).toString('utf8'), signature: req.headers['processor-signature'] as string | undefined });
    res.writeHead(200).end();
  });
});
const receiverPort = await freePort();
await new Promise<void>((resolve) => receiver.listen(receiverPort, '127.0.0.1', resolve));
const sandbox: ProcessorSandbox = await startProcessorSandbox({
  port: await freePort(),
  secretKey: SECRET_KEY,
  publishableKey: 'pk_test_sandbox_local',
  webhookSecret: WEBHOOK_SECRET,
  webhookUrl: `http://127.0.0.1:${receiverPort}/webhooks`,
  retryDelaysMs: [],
});

// The service's configuration is read once when its modules load: point it at this sandbox first.
process.env.PROCESSOR_API_BASE = sandbox.url;
process.env.PROCESSOR_SECRET_KEY = SECRET_KEY;
const { usePartnerSuite } = await import('../../support/api');
const { createHandler } = await import('../../../functions/transactions-checkout-intent');
const { transactionDeps } = await import('../../../lib/composition');
const { currencyCode } = await import('../../../lib/domain/money');
const { processor } = transactionDeps;
const store = await import('../../../lib/store/transactions');
const { sign } = await import('../../support/api');
const { createCheckoutIntent } = await import('../../../lib/use-cases/transactions');
const { getPartner } = await import('../../../lib/store/partners');
const { httpEvent, lambdaContext } = await import('../../support/events');

const stripe = new Stripe(SECRET_KEY, { host: '127.0.0.1', port: sandbox.port, protocol: 'http' });

const suite = usePartnerSuite();
afterAll(async () => {
  await sandbox.close();
  await new Promise((resolve) => receiver.close(resolve));
});

const checkoutBody = (overrides: Record<string, unknown> = {}) => ({
  partner_id: suite.partner.partnerId,
  client_id: suite.clientId,
  amount: 49.99,
  currency: 'eur',
  email: 'buyer@example.com',
  partner_reference: `order-${randomUUID()}`,
  statement_descriptor_suffix: 'ORDER 42',
  meta: { cart: 'c-1', items: 3 },
  ...overrides,
});

async function waitForEvent(type: string, intentId: string) {
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline) {
    const event = received.find((candidate) => {
      const parsed = JSON.parse(candidate.body) as { type: string; data: { object: { id: string } } };
      return parsed.type === type && parsed.data.object.id === intentId;
    });
    if (event !== undefined) return event;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no ${type} for ${intentId}`);
}

describe('POST /transactions/checkout-intent', () => {
  it('creates a pending transaction and exactly one intent, and returns what the frontend needs', async () => {
    // Arrange
    const body = checkoutBody();
    const key = `checkout-${body.partner_reference}`;

    // Act
    const response = await suite.api.signed(suite.partner, '/transactions/checkout-intent', body, { idempotencyKey: key });
    const replay = await suite.api.signed(suite.partner, '/transactions/checkout-intent', body, { idempotencyKey: key });

    // Assert: the response
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      svc_tx_id: expect.stringMatching(/^svc_tx_[0-9a-z]{24}$/),
      status: 'pending',
      processor_payment_intent_id: expect.stringMatching(/^pi_/),
      client_secret: expect.stringMatching(/^pi_.+_secret_/),
      processor_publishable_key: 'pk_test_sandbox_local',
    });
    expect(replay.body).toEqual({ ...response.body, idempotentReplay: true });
    // Assert: exactly one intent at the processor, carrying the transaction's facts
    const intents = sandbox.intents().filter((intent) => intent.metadata.svc_tx_id === response.body.svc_tx_id);
    expect(intents).toHaveLength(1);
    expect(intents[0]).toMatchObject({
      id: response.body.processor_payment_intent_id,
      amount: 4999,
      currency: 'eur',
      receipt_email: 'buyer@example.com',
      statement_descriptor_suffix: 'ORDER 42',
      metadata: { svc_tx_id: response.body.svc_tx_id, partner_id: suite.partner.partnerId, client_id: suite.clientId, partner_reference: body.partner_reference },
    });
    // Assert: the transaction as the read endpoint shows it
    const read = await suite.api.read(suite.partner, `/transactions/${response.body.svc_tx_id}`);
    expect(read.body).toMatchObject({
      svcTxId: response.body.svc_tx_id,
      partnerId: suite.partner.partnerId,
      clientId: suite.clientId,
      clientName: 'Merchant Ltd',
      partnerReference: body.partner_reference,
      processorPaymentIntentId: response.body.processor_payment_intent_id,
      amount: 49.99,
      currency: 'EUR',
      status: 'pending',
      settlementStatus: 'unsettled',
      processorFee: null,
      netAmount: null,
      meta: { cart: 'c-1', items: 3 },
    });
  });

  it('confirming the intent with pm_card_visa emits a payment_intent.succeeded the SDK verifies', async () => {
    const response = await suite.api.signed(suite.partner, '/transactions/checkout-intent', checkoutBody());
    const intentId = response.body.processor_payment_intent_id as string;

    await stripe.paymentIntents.confirm(intentId, { payment_method: 'pm_card_visa' });
    const delivery = await waitForEvent('payment_intent.succeeded', intentId);

    const event = stripe.webhooks.constructEvent(delivery.body, delivery.signature ?? '', WEBHOOK_SECRET);
    expect(event.type).toBe('payment_intent.succeeded');
    expect((event.data.object as Stripe.PaymentIntent).metadata.svc_tx_id).toBe(response.body.svc_tx_id);
    expect(() => stripe.webhooks.constructEvent(delivery.body.replace('succeeded', 'failed'), delivery.signature ?? '', WEBHOOK_SECRET)).toThrow();
    expect(() => stripe.webhooks.constructEvent(delivery.body, delivery.signature ?? '', 'whsec_wrong')).toThrow();
  });

  it('a retry after the processor call succeeded but the transaction write failed finds the same intent', async () => {
    // Arrange: the real handler, whose transaction write fails once (the injected fault)
    let failures = 0;
    const faulty = createHandler({
      ...transactionDeps,
      transactions: {
        ...store,
        createTransaction: async (tx) => {
          if (failures++ === 0) throw new Error('injected: write lost after the intent was created');
          return store.createTransaction(tx);
        },
      },
    });
    const body = JSON.stringify(checkoutBody());
    const idempotencyKey = `retry-${randomUUID()}`;
    const request = () =>
      httpEvent({
        method: 'POST',
        path: '/api/v1/transactions/checkout-intent',
        body,
        headers: { 'x-api-key': suite.partner.apiKey, 'x-svc-hmac': sign(suite.partner.hmacSecret, body), 'idempotency-key': idempotencyKey },
      });
    const before = sandbox.intents().length;

    // Act: the first attempt fails after the processor call; the partner retries with the same key
    const failed = await faulty(request(), lambdaContext());
    const retried = await faulty(request(), lambdaContext());

    // Assert: one intent, one transaction, the retry answers with them
    expect(failed.statusCode).toBe(500);
    expect(retried.statusCode).toBe(201);
    const result = JSON.parse(retried.body ?? '') as { svc_tx_id: string; processor_payment_intent_id: string };
    expect(sandbox.intents().length - before).toBe(1);
    expect(sandbox.intents().filter((intent) => intent.metadata.svc_tx_id === result.svc_tx_id)).toHaveLength(1);
    const reference = (JSON.parse(body) as { partner_reference: string }).partner_reference;
    const list = await suite.api.read(suite.partner, `/transactions?partner_reference=${encodeURIComponent(reference)}`);
    expect(list.body.items).toHaveLength(1);
    expect(list.body.items[0]).toMatchObject({ svcTxId: result.svc_tx_id, processorPaymentIntentId: result.processor_payment_intent_id, status: 'pending' });
  });

  it('reports a value the sandbox processor refuses as the port refusal naming it, never as a failure of its own', async () => {
    const refused = processor.createPaymentIntent({
      svcTxId: `svc_tx_${randomUUID().replace(/-/g, '').slice(0, 24)}`,
      amountMinor: 100,
      currency: currencyCode('USD'),
      receiptEmail: 'not-an-email',
      statementDescriptorSuffix: undefined,
      metadata: {},
    });

    await expect(refused).rejects.toBeInstanceOf(ProcessorRefusedParameter);
    await expect(refused).rejects.toMatchObject({ parameter: 'receiptEmail', refusedBy: 'processor' });
  });

  it('after a refused first attempt, the same idempotency key with a corrected body starts a new attempt', async () => {
    // Arrange: a processor that refuses the first intent (as Stripe does below its minimum amount)
    let calls = 0;
    const strict = createHandler({
      ...transactionDeps,
      processor: {
        ...processor,
        createPaymentIntent: async (intent) => {
          if (calls++ === 0) throw new ProcessorRefusedParameter('amount', 'Amount must be at least 0.50 usd', 'processor');
          return processor.createPaymentIntent(intent);
        },
      },
    });
    const idempotencyKey = `corrected-${randomUUID()}`;
    const send = (amount: number) => {
      const body = JSON.stringify(checkoutBody({ amount, currency: 'USD' }));
      return strict(
        httpEvent({
          method: 'POST',
          path: '/api/v1/transactions/checkout-intent',
          body,
          headers: { 'x-api-key': suite.partner.apiKey, 'x-svc-hmac': sign(suite.partner.hmacSecret, body), 'idempotency-key': idempotencyKey },
        }),
        lambdaContext(),
      );
    };

    // Act
    const refused = await send(0.1);
    const corrected = await send(5);

    // Assert
    expect(refused.statusCode).toBe(400);
    expect(JSON.parse(refused.body ?? '')).toMatchObject({
      code: 'VALIDATION_ERROR',
      error: 'The card processor refused the request',
      details: { fieldErrors: { amount: ['Refused by the card processor: Amount must be at least 0.50 usd'] }, formErrors: [] },
    });
    expect(corrected.statusCode).toBe(201);
    const intentId = (JSON.parse(corrected.body ?? '') as { processor_payment_intent_id: string }).processor_payment_intent_id;
    expect(sandbox.intents().find((intent) => intent.id === intentId)?.amount).toBe(500);
  });

  describe('a retry after the answer was lost, when the processor forgot its idempotency key', () => {
    // The processor makes a new intent for the same svc_tx_id (its keys expire after 24 h; a sandbox was wiped).
    const forgetful = (retrieve: Processor['retrievePaymentIntent']) => ({
      ...transactionDeps,
      processor: {
        ...processor,
        createPaymentIntent: (intent: Parameters<Processor['createPaymentIntent']>[0]) => processor.createPaymentIntent({ ...intent, svcTxId: `${intent.svcTxId}x${randomUUID().slice(0, 4)}` }),
        retrievePaymentIntent: retrieve,
      },
    });
    const attemptOf = () => ({ owner: suite.partner.partnerId, endpoint: 'POST /api/v1/transactions/checkout-intent', idempotencyKey: `lost-${randomUUID()}`, fingerprint: 'same-body', nonce: randomUUID() });
    const input = () => ({
      partnerId: suite.partner.partnerId,
      clientId: suite.clientId,
      amountMinor: 4999,
      currency: currencyCode('EUR'),
      email: 'buyer@example.com',
      partnerReference: `lost-${randomUUID()}`,
      statementDescriptorSuffix: undefined,
      meta: undefined,
    });
    const callerOf = async () => ({ kind: 'partner' as const, keyId: suite.partner.keyId, partner: (await getPartner(suite.partner.partnerId))! });

    it('answers with the stored transaction and its own intent, not a 500', async () => {
      const deps = forgetful(processor.retrievePaymentIntent);
      const [caller, attempt, payment] = [await callerOf(), attemptOf(), input()];

      const first = await createCheckoutIntent(deps, caller, payment, attempt);
      const retry = await createCheckoutIntent(deps, caller, payment, attempt);

      expect(retry.transaction.svcTxId).toBe(first.transaction.svcTxId);
      expect(retry.intent.id).toBe(first.intent.id);
      expect(retry.intent.clientSecret).toBe(first.intent.clientSecret);
    });

    it('answers 502 PROCESSOR_INTENT_MISSING when the processor no longer knows the stored intent either', async () => {
      const deps = forgetful(async () => undefined);
      const [caller, attempt, payment] = [await callerOf(), attemptOf(), input()];
      await createCheckoutIntent(deps, caller, payment, attempt);

      await expect(createCheckoutIntent(deps, caller, payment, attempt)).rejects.toMatchObject({ status: 502, code: 'PROCESSOR_INTENT_MISSING' });
    });
  });
});
