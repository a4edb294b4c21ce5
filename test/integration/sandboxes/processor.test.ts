/**
 * The processor sandbox, driven by the real stripe SDK over HTTP, delivering signed events to a real HTTP
 * receiver whose signatures are checked with the SDK's own verifier.
 */
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import Stripe from 'stripe';
import { startProcessorSandbox, type ProcessorSandbox, type SandboxEvent } from '../../../infra/local/sandbox/processor';
import { freePort } from '../../support/ports';
import { deliveryOf, failure, runModule, sdk as sandboxSdk, startReceiver, waitFor, type Receiver } from '../../support/processor-sandbox';

const SECRET_KEY = 'sk_test_sandbox_integration_0123456789';
const WEBHOOK_SECRET = 'whsec_sandbox_integration';

async function startSandbox(webhookUrl: string, retryDelaysMs = [50, 50]): Promise<ProcessorSandbox> {
  return startProcessorSandbox({ port: await freePort(), host: '127.0.0.1', secretKey: SECRET_KEY, publishableKey: 'pk_test_sandbox_integration', webhookSecret: WEBHOOK_SECRET, webhookUrl, retryDelaysMs });
}

function sdk(sandbox: ProcessorSandbox, key = SECRET_KEY): Stripe {
  return sandboxSdk(sandbox, key);
}

async function rawPost(sandbox: ProcessorSandbox, path: string, body: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${sandbox.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${SECRET_KEY}`, 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body,
  });
  return { status: response.status, body: (await response.json()) as { error?: Record<string, unknown> } & Record<string, unknown> };
}

/** The balance transaction Stripe withdraws a dispute's amount and fee with, as the sandbox should make it. */
function withdrawal(dispute: Record<string, unknown>, amount: number, fee: number) {
  return {
    id: expect.stringMatching(/^txn_[A-Za-z0-9]{24}$/),
    object: 'balance_transaction',
    amount: -amount,
    available_on: dispute.created,
    balance_type: 'payments',
    created: dispute.created,
    currency: 'usd',
    description: `Chargeback withdrawal for ${String(dispute.charge)}`,
    exchange_rate: null,
    fee,
    fee_details: [{ amount: fee, application: null, currency: 'usd', description: 'Dispute fee', type: 'stripe_fee' }],
    net: -amount - fee,
    reporting_category: 'dispute',
    source: dispute.id,
    status: 'available',
    type: 'adjustment',
  };
}

describe('the processor sandbox API, through the stripe SDK', () => {
  let receiver: Receiver;
  let sandbox: ProcessorSandbox;
  let stripe: Stripe;
  beforeAll(async () => {
    receiver = await startReceiver();
    sandbox = await startSandbox(receiver.url);
    stripe = sdk(sandbox);
  });
  afterAll(async () => {
    await sandbox.close();
    await receiver.close();
  });

  const newIntent = (amount = 2_500) => stripe.paymentIntents.create({ amount, currency: 'usd', metadata: { svc_tx_id: 'tx_test' } });
  const succeededIntent = async (amount = 2_500) => {
    const intent = await newIntent(amount);
    return stripe.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_visa' });
  };

  describe('PaymentIntents: create and retrieve', () => {
    it('creates an intent in Stripe shape and retrieves the same object', async () => {
      const before = Math.floor(Date.now() / 1000);
      const created = await stripe.paymentIntents.create({
        amount: 2_500,
        currency: 'USD',
        receipt_email: 'payer@example.com',
        statement_descriptor_suffix: 'ORDER 42',
        description: 'Order 42',
        metadata: { svc_tx_id: 'tx_123', partner_id: 'p_1' },
        automatic_payment_methods: { enabled: true },
      });

      expect(created.id).toMatch(/^pi_[A-Za-z0-9]{24}$/);
      expect(created.client_secret).toMatch(new RegExp(`^${created.id}_secret_[A-Za-z0-9]+$`));
      expect(created).toMatchObject({
        object: 'payment_intent',
        amount: 2_500,
        amount_received: 0,
        currency: 'usd',
        status: 'requires_payment_method',
        metadata: { svc_tx_id: 'tx_123', partner_id: 'p_1' },
        receipt_email: 'payer@example.com',
        statement_descriptor_suffix: 'ORDER 42',
        description: 'Order 42',
        automatic_payment_methods: { enabled: true },
        livemode: false,
        latest_charge: null,
        last_payment_error: null,
        payment_method: null,
        canceled_at: null,
        cancellation_reason: null,
      });
      expect(created.created).toBeGreaterThanOrEqual(before);
      expect(created.created).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
      expect(created.lastResponse.headers['request-id']).toMatch(/^req_/);

      const retrieved = await stripe.paymentIntents.retrieve(created.id);
      expect({ ...retrieved }).toEqual({ ...created });
      expect(sandbox.intents().find((intent) => intent.id === created.id)).toEqual({ ...created });
    });

    it('answers an unknown intent with 404 resource_missing', async () => {
      const error = await failure(stripe.paymentIntents.retrieve('pi_doesnotexist'));

      expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
      expect(error.statusCode).toBe(404);
      expect(error.code).toBe('resource_missing');
      expect(error.param).toBe('intent');
      expect(error.message).toBe("No such payment_intent: 'pi_doesnotexist'");
    });

    it('refuses missing or invalid parameters with 400 invalid_request_error naming the param', async () => {
      const noAmount = await failure(stripe.paymentIntents.create({ currency: 'usd' } as Stripe.PaymentIntentCreateParams));
      const negative = await failure(stripe.paymentIntents.create({ amount: -5, currency: 'usd' }));
      const fractional = await failure(stripe.paymentIntents.create({ amount: 12.5, currency: 'usd' }));
      const noCurrency = await failure(stripe.paymentIntents.create({ amount: 100 } as Stripe.PaymentIntentCreateParams));
      const badCurrency = await failure(stripe.paymentIntents.create({ amount: 100, currency: 'xyz' }));
      const unknown = await failure(stripe.paymentIntents.create({ amount: 100, currency: 'usd', colour: 'red' } as Stripe.PaymentIntentCreateParams));

      for (const error of [noAmount, negative, fractional, noCurrency, badCurrency, unknown]) {
        expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
        expect(error.statusCode).toBe(400);
        expect(error.rawType).toBe('invalid_request_error');
      }
      expect([noAmount.param, negative.param, fractional.param, noCurrency.param, badCurrency.param, unknown.param]).toEqual([
        'amount',
        'amount',
        'amount',
        'currency',
        'currency',
        'colour',
      ]);
      expect(noAmount.code).toBe('parameter_missing');
      expect(noAmount.message).toBe('Missing required param: amount.');
      expect(fractional.code).toBe('parameter_invalid_integer');
      expect(unknown.message).toBe('Received unknown parameter: colour');
    });

    it('refuses expand, which it does not implement, rather than answering unexpanded objects', async () => {
      const intent = await newIntent();

      const onRetrieve = await failure(stripe.paymentIntents.retrieve(intent.id, { expand: ['latest_charge'] }));
      const onCreate = await failure(stripe.paymentIntents.create({ amount: 100, currency: 'usd', expand: ['latest_charge'] }));

      for (const error of [onRetrieve, onCreate]) {
        expect(error.statusCode).toBe(400);
        expect(error.param).toBe('expand');
        expect(error.message).toContain('does not implement expand');
      }
    });

    it('refuses a malformed form body with 400 and keeps serving', async () => {
      const badEncoding = await rawPost(sandbox, '/v1/payment_intents', 'amount=100&currency=%ZZ');
      const conflicting = await rawPost(sandbox, '/v1/payment_intents', 'amount=100&amount[x]=1&currency=usd');
      const json = await rawPost(sandbox, '/v1/payment_intents', '{"amount":100}', { 'content-type': 'application/json' });

      for (const answer of [badEncoding, conflicting, json]) {
        expect(answer.status).toBe(400);
        expect(answer.body.error).toMatchObject({ type: 'invalid_request_error', message: expect.stringMatching(/^Invalid request body/) });
      }
      const after = await rawPost(sandbox, '/v1/payment_intents', 'amount=100&currency=eur&payment_method_types[]=card&metadata[k]=v');
      expect(after.status).toBe(200);
      expect(after.body).toMatchObject({ amount: 100, currency: 'eur', payment_method_types: ['card'], metadata: { k: 'v' } });
    });

    it('answers an unknown route with 404 in Stripe error shape', async () => {
      const response = await fetch(`${sandbox.url}/v1/customers`, { headers: { authorization: `Bearer ${SECRET_KEY}` } });

      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({
        error: { type: 'invalid_request_error', message: expect.stringContaining('Unrecognized request URL (GET: /v1/customers)') },
      });
    });
  });

  describe('idempotency', () => {
    it('replays the first response for the same key and parameters, creating one intent', async () => {
      const key = `create-${Date.now()}`;
      const params = { amount: 4_200, currency: 'usd', metadata: { svc_tx_id: 'tx_idem' } };
      const before = sandbox.intents().length;

      const first = await stripe.paymentIntents.create(params, { idempotencyKey: key });
      const second = await stripe.paymentIntents.create(params, { idempotencyKey: key });

      expect(second.id).toBe(first.id);
      expect(second.client_secret).toBe(first.client_secret);
      expect(first.lastResponse.headers['idempotent-replayed']).toBeUndefined();
      expect(second.lastResponse.headers['idempotent-replayed']).toBe('true');
      expect(sandbox.intents()).toHaveLength(before + 1);
    });

    it('refuses the same key with different parameters with an idempotency error', async () => {
      const key = `create-${Date.now()}-differs`;
      await stripe.paymentIntents.create({ amount: 1_000, currency: 'usd' }, { idempotencyKey: key });
      const before = sandbox.intents().length;

      const error = await failure(stripe.paymentIntents.create({ amount: 1_001, currency: 'usd' }, { idempotencyKey: key }));

      expect(error).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
      expect(error.statusCode).toBe(400);
      expect(error.rawType).toBe('idempotency_error');
      expect(error.message).toContain('same parameters');
      expect(sandbox.intents()).toHaveLength(before);
    });
  });

  describe('authentication', () => {
    it('refuses a wrong API key with 401, which the SDK raises as an authentication error', async () => {
      const before = sandbox.intents().length;

      const error = await failure(sdk(sandbox, 'sk_test_wrong_key_abcdefgh').paymentIntents.create({ amount: 100, currency: 'usd' }));

      expect(error).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
      expect(error.statusCode).toBe(401);
      expect(error.rawType).toBe('invalid_request_error');
      expect(error.message).toMatch(/^Invalid API Key provided: sk_test_\*+efgh$/);
      expect(sandbox.intents()).toHaveLength(before);
    });

    it('refuses a request without an Authorization header with 401', async () => {
      const response = await fetch(`${sandbox.url}/v1/payment_intents/pi_anything`);

      expect(response.status).toBe(401);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(await response.json()).toEqual({ error: { type: 'invalid_request_error', message: expect.stringContaining('You did not provide an API key') } });
    });
  });

  describe('confirm', () => {
    it('succeeds with pm_card_visa and emits payment_intent.succeeded and charge.succeeded, signed for the SDK verifier', async () => {
      const intent = await newIntent(3_000);

      const confirmed = await stripe.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_visa' }, { idempotencyKey: `confirm-${intent.id}` });

      expect(confirmed).toMatchObject({ id: intent.id, status: 'succeeded', amount_received: 3_000, last_payment_error: null });
      expect(confirmed.latest_charge).toMatch(/^ch_[A-Za-z0-9]{24}$/);
      expect(confirmed.payment_method).toMatch(/^pm_/);

      const delivery = await deliveryOf(receiver, 'payment_intent.succeeded', intent.id);
      expect(delivery.headers['content-type']).toBe('application/json');
      const event = stripe.webhooks.constructEvent(delivery.rawBody, String(delivery.headers['processor-signature']), WEBHOOK_SECRET);
      expect(event).toMatchObject({
        id: expect.stringMatching(/^evt_/),
        object: 'event',
        api_version: Stripe.API_VERSION,
        livemode: false,
        pending_webhooks: 1,
        request: { id: confirmed.lastResponse.requestId, idempotency_key: `confirm-${intent.id}` },
        type: 'payment_intent.succeeded',
        data: { object: { id: intent.id, object: 'payment_intent', status: 'succeeded', amount_received: 3_000, latest_charge: confirmed.latest_charge } },
      });

      const charge = await deliveryOf(receiver, 'charge.succeeded', String(confirmed.latest_charge));
      const chargeEvent = stripe.webhooks.constructEvent(charge.rawBody, String(charge.headers['processor-signature']), WEBHOOK_SECRET);
      expect(chargeEvent.data.object).toMatchObject({ object: 'charge', amount: 3_000, payment_intent: intent.id, status: 'succeeded', paid: true });
      expect((chargeEvent.data.object as Stripe.Charge).refunds).toEqual({
        object: 'list',
        data: [],
        has_more: false,
        total_count: 0,
        url: `/v1/charges/${String(confirmed.latest_charge)}/refunds`,
      });
    });

    it('signs so that a tampered body or another secret fails verification', async () => {
      const intent = await succeededIntent(1_500);
      const delivery = await deliveryOf(receiver, 'payment_intent.succeeded', intent.id);
      const signature = String(delivery.headers['processor-signature']);
      expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);

      const tampered = delivery.rawBody.replace('"amount": 1500', '"amount": 1');
      expect(tampered).not.toBe(delivery.rawBody);
      expect(() => stripe.webhooks.constructEvent(tampered, signature, WEBHOOK_SECRET)).toThrow(Stripe.errors.StripeSignatureVerificationError);
      expect(() => stripe.webhooks.constructEvent(delivery.rawBody, signature, 'whsec_someone_else')).toThrow(Stripe.errors.StripeSignatureVerificationError);
      expect(stripe.webhooks.constructEvent(delivery.rawBody, signature, WEBHOOK_SECRET).id).toBe(delivery.eventId);
    });

    it('declines pm_card_chargeDeclined with a 402 card error, emits payment_failed, and succeeds on a retry with visa', async () => {
      const intent = await newIntent(2_000);

      const error = await failure(stripe.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_chargeDeclined' }));

      expect(error).toBeInstanceOf(Stripe.errors.StripeCardError);
      expect(error.statusCode).toBe(402);
      expect(error.code).toBe('card_declined');
      expect(error.decline_code).toBe('generic_decline');
      expect(error.payment_intent).toMatchObject({ id: intent.id, status: 'requires_payment_method' });
      const failed = await stripe.paymentIntents.retrieve(intent.id);
      expect(failed.status).toBe('requires_payment_method');
      expect(failed.last_payment_error).toMatchObject({ type: 'card_error', code: 'card_declined', decline_code: 'generic_decline' });
      const failedEvent = await deliveryOf(receiver, 'payment_intent.payment_failed', intent.id);
      expect(JSON.parse(failedEvent.rawBody)).toMatchObject({ data: { object: { last_payment_error: { code: 'card_declined' } } } });

      const retried = await stripe.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_visa' });

      expect(retried).toMatchObject({ status: 'succeeded', amount_received: 2_000, last_payment_error: null });
      await deliveryOf(receiver, 'payment_intent.succeeded', intent.id);
    });

    it('refuses to confirm a succeeded intent, or with an unknown payment method', async () => {
      const succeeded = await succeededIntent();
      const fresh = await newIntent();

      const again = await failure(stripe.paymentIntents.confirm(succeeded.id, { payment_method: 'pm_card_visa' }));
      const unknown = await failure(stripe.paymentIntents.confirm(fresh.id, { payment_method: 'pm_card_unheard_of' }));

      expect(again.statusCode).toBe(400);
      expect(again.code).toBe('payment_intent_unexpected_state');
      expect(unknown.statusCode).toBe(400);
      expect(unknown.code).toBe('resource_missing');
      expect(unknown.param).toBe('payment_method');
      expect((await stripe.paymentIntents.retrieve(fresh.id)).status).toBe('requires_payment_method');
    });
  });

  describe('cancel', () => {
    it('cancels an intent, emits payment_intent.canceled, and then refuses to confirm it', async () => {
      const intent = await newIntent();

      const canceled = await stripe.paymentIntents.cancel(intent.id, { cancellation_reason: 'requested_by_customer' });

      expect(canceled).toMatchObject({ status: 'canceled', cancellation_reason: 'requested_by_customer' });
      expect(canceled.canceled_at).toEqual(expect.any(Number));
      const delivery = await deliveryOf(receiver, 'payment_intent.canceled', intent.id);
      expect(JSON.parse(delivery.rawBody)).toMatchObject({ data: { object: { status: 'canceled' } } });
      const confirm = await failure(stripe.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_visa' }));
      expect(confirm.code).toBe('payment_intent_unexpected_state');
    });

    it('refuses to cancel a succeeded intent', async () => {
      const intent = await succeededIntent();

      const error = await failure(stripe.paymentIntents.cancel(intent.id));

      expect(error.statusCode).toBe(400);
      expect(error.code).toBe('payment_intent_unexpected_state');
      expect((await stripe.paymentIntents.retrieve(intent.id)).status).toBe('succeeded');
    });
  });

  describe('refunds', () => {
    it('refunds in full by payment_intent and emits charge.refunded with refunded true', async () => {
      const intent = await succeededIntent(5_000);

      const refund = await stripe.refunds.create({ payment_intent: intent.id });

      expect(refund).toMatchObject({
        id: expect.stringMatching(/^re_/),
        object: 'refund',
        amount: 5_000,
        charge: intent.latest_charge,
        payment_intent: intent.id,
        status: 'succeeded',
        currency: 'usd',
      });
      const delivery = await deliveryOf(receiver, 'charge.refunded', String(intent.latest_charge));
      expect(JSON.parse(delivery.rawBody)).toMatchObject({
        data: { object: { object: 'charge', amount: 5_000, amount_refunded: 5_000, refunded: true, payment_intent: intent.id, currency: 'usd', status: 'succeeded' } },
      });
      const again = await failure(stripe.refunds.create({ payment_intent: intent.id }));
      expect(again.statusCode).toBe(400);
      expect(again.code).toBe('charge_already_refunded');
    });

    it('refunds partially by charge (refunded false), refuses more than remains, then refunds the rest', async () => {
      const intent = await succeededIntent(1_000);
      const chargeId = String(intent.latest_charge);

      const partial = await stripe.refunds.create({ charge: chargeId, amount: 300 });
      const tooMuch = await failure(stripe.refunds.create({ payment_intent: intent.id, amount: 701 }));
      const rest = await stripe.refunds.create({ payment_intent: intent.id });

      expect(partial).toMatchObject({ amount: 300, charge: chargeId, payment_intent: intent.id });
      expect(tooMuch.statusCode).toBe(400);
      expect(tooMuch.param).toBe('amount');
      expect(rest.amount).toBe(700);
      const refunded = await waitFor('both charge.refunded events', () => {
        const events = receiver.deliveries.filter((d) => d.type === 'charge.refunded' && d.objectId === chargeId);
        return events.length === 2 ? events.map((d) => (JSON.parse(d.rawBody) as { data: { object: { amount_refunded: number; refunded: boolean } } }).data.object) : undefined;
      });
      expect(refunded.sort((a, b) => a.amount_refunded - b.amount_refunded)).toEqual([
        expect.objectContaining({ amount_refunded: 300, refunded: false }),
        expect.objectContaining({ amount_refunded: 1_000, refunded: true }),
      ]);
    });

    it('lists the charge\'s refunds on charge.refunded, newest first, with amount_refunded cumulative', async () => {
      const intent = await succeededIntent(1_000);
      const chargeId = String(intent.latest_charge);

      const first = await stripe.refunds.create({ charge: chargeId, amount: 300 });
      const second = await stripe.refunds.create({ payment_intent: intent.id, amount: 200, reason: 'requested_by_customer' });

      const charges = await waitFor('both charge.refunded events', () => {
        const events = receiver.deliveries.filter((d) => d.type === 'charge.refunded' && d.objectId === chargeId);
        return events.length === 2 ? events.map((d) => (JSON.parse(d.rawBody) as { data: { object: Stripe.Charge } }).data.object) : undefined;
      });
      const [afterFirst, afterSecond] = charges.sort((a, b) => a.amount_refunded - b.amount_refunded);
      const list = (data: Stripe.Refund[]) => ({ object: 'list', data, has_more: false, total_count: data.length, url: `/v1/charges/${chargeId}/refunds` });
      expect(afterFirst).toMatchObject({ amount_refunded: 300, refunded: false, refunds: list([{ ...first }]) });
      expect(afterSecond).toMatchObject({ amount_refunded: 500, refunded: false, refunds: list([{ ...second }, { ...first }]) });
      expect(afterSecond?.refunds?.data.map((refund) => [refund.amount, refund.reason])).toEqual([
        [200, 'requested_by_customer'],
        [300, null],
      ]);
    });

    it('refuses to refund an intent that has not succeeded', async () => {
      const intent = await newIntent();

      const error = await failure(stripe.refunds.create({ payment_intent: intent.id }));

      expect(error.statusCode).toBe(400);
      expect(error.param).toBe('payment_intent');
      expect(sandbox.events().some((e) => e.event.type === 'charge.refunded' && (e.event.data.object as { payment_intent: string }).payment_intent === intent.id)).toBe(false);
    });
  });

  describe('disputes (sandbox trigger)', () => {
    it('disputes a succeeded payment and emits charge.dispute.created', async () => {
      const intent = await succeededIntent(7_700);

      const answer = await rawPost(sandbox, `/sandbox/payment_intents/${intent.id}/dispute`, '');

      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({
        id: expect.stringMatching(/^dp_/),
        object: 'dispute',
        amount: 7_700,
        charge: intent.latest_charge,
        payment_intent: intent.id,
        currency: 'usd',
        reason: 'fraudulent',
        status: 'needs_response',
      });
      // Without amount and fee: the whole charge, at Stripe's $15 fee.
      expect(answer.body.balance_transactions).toEqual([withdrawal(answer.body, 7_700, 1_500)]);
      const delivery = await deliveryOf(receiver, 'charge.dispute.created', String(answer.body.id));
      const event = stripe.webhooks.constructEvent(delivery.rawBody, String(delivery.headers['processor-signature']), WEBHOOK_SECRET);
      expect(event.data.object).toEqual(answer.body);
      // As at Stripe, a dispute comes from the card network, not from an API request.
      expect(event.request).toEqual({ id: null, idempotency_key: null });
    });

    it('disputes part of a payment at the fee given, and carries both in charge.dispute.created', async () => {
      const intent = await succeededIntent(5_000);

      const answer = await rawPost(sandbox, `/sandbox/payment_intents/${intent.id}/dispute`, 'amount=1200&fee=2000');

      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ amount: 1_200, currency: 'usd', status: 'needs_response' });
      expect(answer.body.balance_transactions).toEqual([withdrawal(answer.body, 1_200, 2_000)]);
      const delivery = await deliveryOf(receiver, 'charge.dispute.created', String(answer.body.id));
      const event = stripe.webhooks.constructEvent(delivery.rawBody, String(delivery.headers['processor-signature']), WEBHOOK_SECRET);
      expect(event.data.object).toEqual(answer.body);
      expect((event.data.object as Stripe.Dispute).balance_transactions[0]).toMatchObject({ amount: -1_200, fee: 2_000, net: -3_200 });
    });

    it('disputes by default what the refunds left, and refuses an amount above it', async () => {
      const intent = await succeededIntent(5_000);
      await stripe.refunds.create({ payment_intent: intent.id, amount: 1_000 });

      const tooLarge = await rawPost(sandbox, `/sandbox/payment_intents/${intent.id}/dispute`, 'amount=4001');
      const badFee = await rawPost(sandbox, `/sandbox/payment_intents/${intent.id}/dispute`, 'fee=-1');
      const answer = await rawPost(sandbox, `/sandbox/payment_intents/${intent.id}/dispute`, 'fee=0');

      expect(tooLarge.status).toBe(400);
      expect(tooLarge.body.error).toMatchObject({ type: 'invalid_request_error', param: 'amount', code: 'amount_too_large' });
      expect(badFee.status).toBe(400);
      expect(badFee.body.error).toMatchObject({ type: 'invalid_request_error', param: 'fee' });
      expect(answer.status).toBe(200);
      expect(answer.body.amount).toBe(4_000);
      expect(answer.body.balance_transactions).toEqual([withdrawal(answer.body, 4_000, 0)]);
    });

    it('refuses to dispute an intent that has not succeeded, and requires the API key', async () => {
      const intent = await newIntent();

      const notSucceeded = await rawPost(sandbox, `/sandbox/payment_intents/${intent.id}/dispute`, '');
      const unauthenticated = await rawPost(sandbox, `/sandbox/payment_intents/${intent.id}/dispute`, '', { authorization: 'Bearer sk_test_nope' });

      expect(notSucceeded.status).toBe(400);
      expect(notSucceeded.body.error).toMatchObject({ type: 'invalid_request_error', code: 'payment_intent_unexpected_state' });
      expect(unauthenticated.status).toBe(401);
    });
  });

  describe('closing disputes (sandbox trigger)', () => {
    const openDispute = async (amount: number, form: string) => {
      const intent = await succeededIntent(amount);
      const answer = await rawPost(sandbox, `/sandbox/payment_intents/${intent.id}/dispute`, form);
      expect(answer.status).toBe(200);
      return answer.body;
    };
    const closedEvents = (disputeId: string) => sandbox.events().filter((e) => e.event.type === 'charge.dispute.closed' && (e.event.data.object as { id: string }).id === disputeId);

    it('closes a dispute as won: the amount comes back in a second balance transaction, and charge.dispute.closed carries it', async () => {
      const dispute = await openDispute(6_000, 'amount=2500&fee=1500');

      const answer = await rawPost(sandbox, `/sandbox/disputes/${String(dispute.id)}/close`, 'status=won');

      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ id: dispute.id, amount: 2_500, status: 'won' });
      expect(answer.body.balance_transactions).toEqual([
        withdrawal(dispute, 2_500, 1_500),
        {
          id: expect.stringMatching(/^txn_[A-Za-z0-9]{24}$/),
          object: 'balance_transaction',
          amount: 2_500,
          available_on: expect.any(Number),
          balance_type: 'payments',
          created: expect.any(Number),
          currency: 'usd',
          description: `Chargeback reversal for ${String(dispute.charge)}`,
          exchange_rate: null,
          fee: 0,
          fee_details: [],
          net: 2_500,
          reporting_category: 'dispute_reversal',
          source: dispute.id,
          status: 'available',
          type: 'adjustment',
        },
      ]);
      // The withdrawal is the one the dispute was opened with, unchanged.
      expect((answer.body.balance_transactions as unknown[])[0]).toEqual((dispute.balance_transactions as unknown[])[0]);
      const delivery = await deliveryOf(receiver, 'charge.dispute.closed', String(dispute.id));
      const event = stripe.webhooks.constructEvent(delivery.rawBody, String(delivery.headers['processor-signature']), WEBHOOK_SECRET);
      expect(event.data.object).toEqual(answer.body);
      // As its creation, the network's decision comes from no API request.
      expect(event.request).toEqual({ id: null, idempotency_key: null });
    });

    it('closes a dispute as lost: the withdrawal stands, and charge.dispute.closed carries it', async () => {
      const dispute = await openDispute(3_000, 'fee=900');

      const answer = await rawPost(sandbox, `/sandbox/disputes/${String(dispute.id)}/close`, 'status=lost');

      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ id: dispute.id, amount: 3_000, status: 'lost' });
      expect(answer.body.balance_transactions).toEqual([withdrawal(dispute, 3_000, 900)]);
      const delivery = await deliveryOf(receiver, 'charge.dispute.closed', String(dispute.id));
      expect(JSON.parse(delivery.rawBody)).toMatchObject({ type: 'charge.dispute.closed', data: { object: { id: dispute.id, status: 'lost', balance_transactions: [{ net: -3_900 }] } } });
      expect((JSON.parse(delivery.rawBody) as { data: { object: Stripe.Dispute } }).data.object.balance_transactions).toHaveLength(1);
    });

    it('refuses a status other than won or lost, a dispute closed already, an unknown dispute, and a call without the API key', async () => {
      const dispute = await openDispute(2_000, '');
      const path = `/sandbox/disputes/${String(dispute.id)}/close`;

      const badStatus = await rawPost(sandbox, path, 'status=under_review');
      const noStatus = await rawPost(sandbox, path, '');
      const unauthenticated = await rawPost(sandbox, path, 'status=won', { authorization: 'Bearer sk_test_nope' });
      const lost = await rawPost(sandbox, path, 'status=lost');
      const again = await rawPost(sandbox, path, 'status=won');
      const unknown = await rawPost(sandbox, '/sandbox/disputes/dp_doesnotexist/close', 'status=won');

      expect(badStatus.status).toBe(400);
      expect(badStatus.body.error).toMatchObject({ type: 'invalid_request_error', param: 'status', message: 'Invalid status: must be one of won, or lost' });
      expect(noStatus.status).toBe(400);
      expect(noStatus.body.error).toMatchObject({ type: 'invalid_request_error', param: 'status', code: 'parameter_missing' });
      expect(unauthenticated.status).toBe(401);
      expect(lost.status).toBe(200);
      expect(again.status).toBe(400);
      expect(again.body.error).toMatchObject({ type: 'invalid_request_error', code: 'dispute_already_closed' });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error).toMatchObject({ type: 'invalid_request_error', code: 'resource_missing', message: "No such dispute: 'dp_doesnotexist'" });
      // Only the one close that was taken sent an event, and the refused ones left the dispute as it was closed.
      expect(closedEvents(String(dispute.id)).map((e) => (e.event.data.object as Stripe.Dispute).status)).toEqual(['lost']);
    });
  });

  describe('odd input', () => {
    it('refuses parameters nested deeper than any Stripe parameter with 400, also under an idempotency key, and keeps serving', async () => {
      const key = `deep-${Date.now()}`;
      const deep = `amount=100&currency=usd&metadata${'[a]'.repeat(5_000)}=1`;

      const refused = await rawPost(sandbox, '/v1/payment_intents', deep, { 'idempotency-key': key });
      const after = await rawPost(sandbox, '/v1/payment_intents', 'amount=100&currency=usd', { 'idempotency-key': key });

      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ type: 'invalid_request_error', message: expect.stringMatching(/^Invalid request body: .*nested/) });
      expect(after.status).toBe(200);
    });

    it('refuses an empty Idempotency-Key rather than sharing one key among unrelated requests', async () => {
      const before = sandbox.intents().length;

      const first = await rawPost(sandbox, '/v1/payment_intents', 'amount=100&currency=usd', { 'idempotency-key': '' });
      const second = await rawPost(sandbox, '/v1/payment_intents', 'amount=200&currency=usd', { 'idempotency-key': '' });

      for (const answer of [first, second]) {
        expect(answer.status).toBe(400);
        expect(answer.body.error).toMatchObject({ type: 'invalid_request_error', message: expect.stringContaining('Invalid idempotency key') });
      }
      expect(sandbox.intents()).toHaveLength(before);
    });

    it('refuses an amount above 99,999,999 minor units with amount_too_large, as Stripe does', async () => {
      const tooLarge = await failure(stripe.paymentIntents.create({ amount: 100_000_000, currency: 'usd' }));
      const largest = await stripe.paymentIntents.create({ amount: 99_999_999, currency: 'usd' });

      expect(tooLarge.statusCode).toBe(400);
      expect(tooLarge.code).toBe('amount_too_large');
      expect(tooLarge.param).toBe('amount');
      expect(largest.amount).toBe(99_999_999);
    });
  });

  describe('GET /sandbox/events', () => {
    it('lists the events with their delivery attempts and outcome', async () => {
      const intent = await succeededIntent();
      const delivery = await deliveryOf(receiver, 'payment_intent.succeeded', intent.id);
      // The receiver has the event; the sandbox records the outcome once the receiver's answer is complete.
      await waitFor('the recorded outcome', () => sandbox.events().find((e) => e.event.id === delivery.eventId && e.outcome === 'delivered'));

      const response = await fetch(`${sandbox.url}/sandbox/events`, { headers: { authorization: `Bearer ${SECRET_KEY}` } });
      const { data } = (await response.json()) as { data: SandboxEvent[] };
      const entry = data.find((e) => e.event.id === delivery.eventId);

      expect(response.status).toBe(200);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(entry).toMatchObject({ outcome: 'delivered', event: { type: 'payment_intent.succeeded' } });
      expect(entry?.attempts).toEqual([expect.objectContaining({ attempt: 1, status: 200, error: null })]);
    });

    it('requires the secret key, as every /v1 route: the events carry each intent\'s client_secret and metadata', async () => {
      // Arrange: an intent whose client_secret an event carries.
      const intent = await succeededIntent();
      await waitFor('its event', () => sandbox.events().find((e) => (e.event.data.object as { id: string }).id === intent.id));

      // Act
      const anonymous = await fetch(`${sandbox.url}/sandbox/events`);
      const wrongKey = await fetch(`${sandbox.url}/sandbox/events`, { headers: { authorization: 'Bearer sk_test_wrong_key_abcdefgh' } });
      const withKey = await fetch(`${sandbox.url}/sandbox/events`, { headers: { authorization: `Bearer ${SECRET_KEY}` } });

      // Assert
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('x-content-type-options')).toBe('nosniff');
      expect(await anonymous.json()).toEqual({ error: { type: 'invalid_request_error', message: expect.stringContaining('You did not provide an API key') } });
      expect(wrongKey.status).toBe(401);
      expect(await wrongKey.json()).toEqual({ error: { type: 'invalid_request_error', message: expect.stringMatching(/^Invalid API Key provided: sk_test_\*+efgh$/) } });
      expect(withKey.status).toBe(200);
      expect(await withKey.text()).toContain(intent.client_secret);
    });
  });
});

describe('webhook delivery retries', () => {
  it('retries a receiver that answers 500 twice, then 200: same event three times, ends delivered', async () => {
    const receiver = await startReceiver((n) => (n <= 2 ? 500 : 200));
    const sandbox = await startSandbox(receiver.url, [50, 50]);
    try {
      const stripe = sdk(sandbox);
      const intent = await stripe.paymentIntents.create({ amount: 900, currency: 'usd' });
      await stripe.paymentIntents.cancel(intent.id);

      const recorded = await waitFor('the delivered outcome', () => sandbox.events().find((e) => e.outcome === 'delivered'));

      expect(receiver.deliveries).toHaveLength(3);
      expect(new Set(receiver.deliveries.map((d) => d.eventId))).toEqual(new Set([recorded.event.id]));
      for (const delivery of receiver.deliveries) {
        expect(stripe.webhooks.constructEvent(delivery.rawBody, String(delivery.headers['processor-signature']), WEBHOOK_SECRET).id).toBe(recorded.event.id);
      }
      expect(recorded.attempts.map((a) => a.status)).toEqual([500, 500, 200]);
      expect(recorded.nextAttemptAt).toBeNull();
    } finally {
      await sandbox.close();
      await receiver.close();
    }
  });

  it('records an event as failed after the last retry when the receiver is down', async () => {
    const downUrl = `http://127.0.0.1:${await freePort()}/webhooks/processor`;
    const sandbox = await startSandbox(downUrl, [50, 50]);
    try {
      const stripe = sdk(sandbox);
      const intent = await stripe.paymentIntents.create({ amount: 900, currency: 'usd' });
      await stripe.paymentIntents.cancel(intent.id);

      const recorded = await waitFor('the failed outcome', () => sandbox.events().find((e) => e.outcome === 'failed'));

      expect(recorded.event.type).toBe('payment_intent.canceled');
      expect(recorded.attempts).toHaveLength(3);
      for (const attempt of recorded.attempts) {
        expect(attempt.status).toBeNull();
        expect(attempt.error).toMatch(/ECONNREFUSED/);
      }
    } finally {
      await sandbox.close();
    }
  });

  it('close() cancels a scheduled retry: a process that only ran the sandbox exits on its own', async () => {
    // A child process starts a receiver that answers 503 and a sandbox whose retry is 10 minutes away, makes
    // one event, waits until the retry is scheduled, closes both and returns from its script. If close() left
    // the retry timer (or any other handle) behind, the child would not exit.
    const child = await runModule(
      `
      import { createServer } from 'node:http';
      import Stripe from 'stripe';
      import { startProcessorSandbox } from './infra/local/sandbox/processor/index.ts';
      const receiver = createServer((req, res) => { req.resume(); req.on('end', () => res.writeHead(503).end()); });
      await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      const sandbox = await startProcessorSandbox({
        port: 0, host: '127.0.0.1', secretKey: 'sk_test_child', publishableKey: 'pk_test_child', webhookSecret: 'whsec_child',
        webhookUrl: 'http://127.0.0.1:' + receiver.address().port + '/', retryDelaysMs: [600000],
      });
      const stripe = new Stripe('sk_test_child', { host: '127.0.0.1', port: sandbox.port, protocol: 'http' });
      const intent = await stripe.paymentIntents.create({ amount: 100, currency: 'usd' });
      await stripe.paymentIntents.cancel(intent.id);
      while (!sandbox.events().some((e) => e.nextAttemptAt !== null)) await new Promise((resolve) => setTimeout(resolve, 10));
      const scheduled = sandbox.events()[0].nextAttemptAt;
      await sandbox.close();
      await new Promise((resolve) => { receiver.close(resolve); receiver.closeAllConnections(); });
      const [event] = sandbox.events();
      console.log(JSON.stringify({ scheduled, outcome: event.outcome, statuses: event.attempts.map((a) => a.status), nextAttemptAt: event.nextAttemptAt }));
      `,
      15_000,
    );

    expect(child.stderr).not.toMatch(/Error/);
    expect(child).toMatchObject({ exitCode: 0, timedOut: false });
    expect(JSON.parse(child.stdout)).toEqual({ scheduled: expect.any(String), outcome: 'pending', statuses: [503], nextAttemptAt: null });
  }, 20_000);
});

/** Whether a TCP connection to host:port is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('where the sandbox listens', () => {
  it('on 127.0.0.1 when no host is given: its url names it, and no other interface of the machine answers', async () => {
    // Arrange: another address of this machine (a non-loopback one when there is one, else IPv6 loopback).
    const other = Object.values(networkInterfaces()).flat().find((address) => address !== undefined && !address.internal && address.family === 'IPv4')?.address ?? '::1';
    const port = await freePort();
    const sandbox = await startProcessorSandbox({ port, secretKey: SECRET_KEY, publishableKey: 'pk_test_sandbox_integration', webhookSecret: WEBHOOK_SECRET, webhookUrl: 'http://127.0.0.1:9/unused', retryDelaysMs: [] });
    try {
      // Act
      const viaUrl = await fetch(`${sandbox.url}/v1/payment_intents/pi_anything`);
      const viaOther = await accepts(other, port);

      // Assert
      expect(sandbox.url).toBe(`http://127.0.0.1:${port}`);
      expect(viaUrl.status).toBe(401);
      expect(viaOther).toBe(false);
    } finally {
      await sandbox.close();
    }
  });
});
