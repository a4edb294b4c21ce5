/**
 * The functions that talk to the card processor, as they deploy: bundled by `infra/build/bundling.ts` (Stripe's
 * unused resources stubbed out), imported and invoked as Lambda invokes them, against the integration run's
 * sandbox processor and DynamoDB Local. A resource stubbed by mistake throws here, not in production.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import Stripe from 'stripe';
import { config } from '../../../lib/config';
import { eventBody, intentObject, signed } from '../../support/processor-events';
import { sign, usePartnerSuite } from '../../support/api';
import { testBundles } from '../../support/bundles';
import { httpEvent, lambdaContext } from '../../support/events';

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

const sandboxUrl = new URL(config.PROCESSOR_API_BASE ?? '');
const stripe = new Stripe(config.PROCESSOR_SECRET_KEY ?? '', { host: sandboxUrl.hostname, port: Number(sandboxUrl.port), protocol: 'http' });

const suite = usePartnerSuite();
const bundles = testBundles();
const bundled: Record<string, Handler> = {};
beforeAll(async () => {
  for (const name of ['transactions-checkout-intent', 'transactions-checkout-intent-v2', 'transactions-attach-intent', 'processor-webhook']) {
    bundled[name] = (await bundles.importFunction<{ handler: Handler }>(name)).handler;
  }
}, 60_000);
afterAll(() => bundles.remove());

async function invoke(name: string, event: APIGatewayProxyEventV2): Promise<{ status: number | undefined; body: any }> {
  const result = await bundled[name]!(event, lambdaContext());
  return { status: result.statusCode, body: result.body === undefined ? undefined : JSON.parse(result.body) };
}

/** A partner mutation to the bundled function `name`, signed as the spec says. */
const signedRequest = (name: string, path: string, body: unknown) => {
  const rawBody = JSON.stringify(body);
  return invoke(
    name,
    httpEvent({
      method: 'POST',
      path: `/api/v1${path}`,
      body: rawBody,
      headers: {
        'content-type': 'application/json',
        'x-api-key': suite.partner.apiKey,
        'x-svc-hmac': sign(suite.partner.hmacSecret, rawBody),
        'idempotency-key': randomUUID(),
      },
    }),
  );
};

const processorEvent = (body: string, signature: string) =>
  invoke('processor-webhook', httpEvent({ method: 'POST', path: '/api/v1/webhooks/processor', body, headers: { 'content-type': 'application/json', 'processor-signature': signature } }));

/** A new transaction's fields for the suite's partner and client: `money` (amount, currency) and any others. */
const transactionBody = (money: Record<string, unknown>) => ({
  partner_id: suite.partner.partnerId,
  client_id: suite.clientId,
  partner_reference: `order-${randomUUID()}`,
  ...money,
});

const checkout = () =>
  signedRequest('transactions-checkout-intent', '/transactions/checkout-intent', transactionBody({ amount: 49.99, currency: 'usd', email: 'buyer@example.com' }));

const checkoutV2 = () =>
  signedRequest('transactions-checkout-intent-v2', '/transactions/checkout-intent-v2', transactionBody({ amount: 20, currency: 'EUR', email: 'buyer@example.com' }));

/** A checkout's answer: a pending transaction with its intent at the processor. */
const createdTransaction = {
  svc_tx_id: expect.stringMatching(/^svc_tx_/),
  status: 'pending',
  processor_payment_intent_id: expect.stringMatching(/^pi_/),
  client_secret: expect.stringMatching(/^pi_.+_secret_/),
};

/** The intent a checkout answered with, as the processor holds it: its amount in minor units, tagged with the transaction. */
async function expectIntent(created: { processor_payment_intent_id: string; svc_tx_id: string }, money: { amount: number; currency: string }) {
  const intent = await stripe.paymentIntents.retrieve(created.processor_payment_intent_id);
  expect(intent).toMatchObject({ ...money, metadata: { svc_tx_id: created.svc_tx_id } });
}

describe('the bundled processor functions (Stripe trimmed)', () => {
  it('checkout-intent creates the payment intent at the processor (paymentIntents.create)', async () => {

    const response = await checkout();

    expect(response.status).toBe(201);
    expect(response.body).toMatchObject(createdTransaction);
    await expectIntent(response.body, { amount: 4999, currency: 'usd' });
  });

  it('checkout-intent-v2 creates the payment intent at the processor too, and answers with the branding', async () => {

    const response = await checkoutV2();

    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ ...createdTransaction, branding: { display_name: expect.stringMatching(/^Partner /), logo_url: null, brand_color: null } });
    await expectIntent(response.body, { amount: 2000, currency: 'eur' });
  });

  it("processor-webhook verifies the processor's signed event (webhooks.signature.verifyHeader) and moves the transaction", async () => {
    const { body: created } = await checkout();
    const intentId: string = created.processor_payment_intent_id;
    await stripe.paymentIntents.confirm(intentId, { payment_method: 'pm_card_visa' });
    const event = eventBody('payment_intent.succeeded', intentObject(intentId, 4999, 'usd'));

    const response = await processorEvent(event, signed(event));
    const forged = await processorEvent(event, signed(event, { secret: 'whsec_not_the_service_secret' }));

    expect(response).toEqual({ status: 200, body: { received: true, svc_tx_id: created.svc_tx_id, status: 'succeeded' } });
    expect((await suite.api.read(suite.partner, `/transactions/${created.svc_tx_id}`)).body).toMatchObject({ status: 'succeeded' });
    // Stripe.errors.StripeSignatureVerificationError, told apart by the bundled service
    expect(forged).toMatchObject({ status: 400, body: { code: 'PROCESSOR_SIGNATURE_INVALID' } });
  });

  it('attach-intent reads the intent back from the processor (paymentIntents.retrieve), a missing one refused', async () => {
    const initialized = await suite.api.signed(suite.partner, '/transactions/initialize', transactionBody({ amount: 1500, currency: 'JPY' }));
    const svcTxId: string = initialized.body.svc_tx_id;
    const intent = await stripe.paymentIntents.create({ amount: 1500, currency: 'jpy', automatic_payment_methods: { enabled: true } });

    const unknown = await signedRequest('transactions-attach-intent', '/transactions/attach-intent', { svc_tx_id: svcTxId, processor_payment_intent_id: 'pi_000000000000000000000000' });
    const attached = await signedRequest('transactions-attach-intent', '/transactions/attach-intent', { svc_tx_id: svcTxId, processor_payment_intent_id: intent.id });

    // A 404 at the processor (Stripe.errors.StripeInvalidRequestError): no such intent
    expect(unknown).toMatchObject({ status: 400, body: { code: 'VALIDATION_ERROR' } });
    expect(attached).toEqual({ status: 200, body: { svc_tx_id: svcTxId, status: 'pending', processor_payment_intent_id: intent.id } });
  });
});
