/**
 * The processor sandbox as a browser reaches it, over plain HTTP: the publishable key (as `Authorization:
 * Bearer pk_...` or Stripe.js's `key` parameter) retrieves and confirms an intent naming its `client_secret`, sees
 * it without `metadata`, and may do nothing else; the API answers browsers with CORS; the Stripe.js stand-in is
 * served at /v3. The secret key's calls, through the stripe SDK, are unchanged.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type Stripe from 'stripe';
import type { ProcessorSandbox, SandboxEvent } from '../../../infra/local/sandbox/processor';
import { deliveryOf, sdk, startReceiver, startSandboxFor, type Receiver } from '../../support/processor-sandbox';

const SECRET_KEY = 'sk_test_browser_api_0123456789';
const PUBLISHABLE_KEY = 'pk_test_browser_api_0123456789';
const WEBHOOK_SECRET = 'whsec_browser_api';
const PUBLISHABLE_REFUSAL =
  'This API call cannot be made with a publishable API key. Please use a secret API key. You can find a list of your API keys at https://dashboard.stripe.com/account/apikeys.';

interface RawAnswer {
  status: number;
  headers: Headers;
  body: { error?: Record<string, unknown> } & Record<string, unknown>;
}

let receiver: Receiver;
let sandbox: ProcessorSandbox;
let stripe: Stripe;

beforeAll(async () => {
  receiver = await startReceiver();
  sandbox = await startSandboxFor(receiver, { secretKey: SECRET_KEY, publishableKey: PUBLISHABLE_KEY, webhookSecret: WEBHOOK_SECRET }, [50]);
  stripe = sdk(sandbox, SECRET_KEY);
});

afterAll(async () => {
  await sandbox.close();
  await receiver.close();
});

/** One request as a browser sends it: form-encoded parameters (a POST's body, a GET's query), no key unless given. */
async function request(method: 'GET' | 'POST' | 'OPTIONS', path: string, params: Record<string, string> = {}, headers: Record<string, string> = {}): Promise<RawAnswer> {
  const encoded = new URLSearchParams(params).toString();
  const url = method === 'GET' && encoded !== '' ? `${sandbox.url}${path}?${encoded}` : `${sandbox.url}${path}`;
  const response = await fetch(url, {
    method,
    headers: { origin: 'http://shop.example', ...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...headers },
    ...(method === 'POST' ? { body: encoded } : {}),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? {} : (JSON.parse(text) as RawAnswer['body']) };
}

/** The events about an intent or its charges, oldest first. */
const eventsOf = (intentId: string): SandboxEvent[] =>
  sandbox.events().filter(({ event }) => {
    const object = event.data.object as { id: string; payment_intent?: string };
    return object.id === intentId || object.payment_intent === intentId;
  });

const newIntent = (amount = 2_500) => stripe.paymentIntents.create({ amount, currency: 'usd', metadata: { svc_tx_id: 'tx_browser', partner_id: 'p_secret_detail' } });

describe('the publishable key with the intent\'s client_secret', () => {
  it('retrieves the intent (key parameter or Bearer), without metadata or anything else Stripe keeps from a browser', async () => {
    const intent = await newIntent();

    const byParameter = await request('GET', `/v1/payment_intents/${intent.id}`, { client_secret: intent.client_secret ?? '', key: PUBLISHABLE_KEY });
    const byBearer = await request('GET', `/v1/payment_intents/${intent.id}`, { client_secret: intent.client_secret ?? '' }, { authorization: `Bearer ${PUBLISHABLE_KEY}` });

    expect(byParameter.status).toBe(200);
    expect(byParameter.body).toEqual({
      id: intent.id,
      object: 'payment_intent',
      amount: 2_500,
      automatic_payment_methods: intent.automatic_payment_methods,
      canceled_at: null,
      cancellation_reason: null,
      capture_method: intent.capture_method,
      client_secret: intent.client_secret,
      confirmation_method: 'automatic',
      created: intent.created,
      currency: 'usd',
      description: null,
      last_payment_error: null,
      livemode: false,
      next_action: null,
      payment_method: null,
      payment_method_types: ['card'],
      receipt_email: null,
      status: 'requires_payment_method',
    });
    expect(byBearer).toMatchObject({ status: 200, body: byParameter.body });
    expect(JSON.stringify(byParameter.body)).not.toContain('p_secret_detail');
  });

  it('confirms with the key parameter as Stripe.js does, emitting the events an SDK confirmation emits, and answers without metadata', async () => {
    const browserIntent = await newIntent(3_100);
    const serverIntent = await newIntent(3_200);

    const confirmed = await request('POST', `/v1/payment_intents/${browserIntent.id}/confirm`, {
      payment_method: 'pm_card_visa',
      client_secret: browserIntent.client_secret ?? '',
      key: PUBLISHABLE_KEY,
      receipt_email: 'payer@example.com',
    });
    await stripe.paymentIntents.confirm(serverIntent.id, { payment_method: 'pm_card_visa' });

    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toMatchObject({ id: browserIntent.id, status: 'succeeded', receipt_email: 'payer@example.com', payment_method: expect.stringMatching(/^pm_/) });
    expect(confirmed.body).not.toHaveProperty('metadata');
    expect(confirmed.body).not.toHaveProperty('latest_charge');
    const browserEvent = await deliveryOf(receiver, 'payment_intent.succeeded', browserIntent.id);
    await deliveryOf(receiver, 'payment_intent.succeeded', serverIntent.id);
    const typesOf = (id: string) => eventsOf(id).map(({ event }) => event.type);
    expect(typesOf(browserIntent.id)).toEqual(typesOf(serverIntent.id));
    expect(typesOf(browserIntent.id)).toEqual(['charge.succeeded', 'payment_intent.succeeded']);
    // The service's event carries the whole intent, metadata included: only the browser's view is restricted.
    expect(JSON.parse(browserEvent.rawBody)).toMatchObject({ data: { object: { metadata: { svc_tx_id: 'tx_browser' }, amount_received: 3_100 } } });
    expect(await stripe.paymentIntents.retrieve(browserIntent.id)).toMatchObject({ status: 'succeeded', metadata: { svc_tx_id: 'tx_browser' } });
  });

  it('answers a decline with the card error and the intent, still without metadata', async () => {
    const intent = await newIntent();

    const declined = await request(
      'POST',
      `/v1/payment_intents/${intent.id}/confirm`,
      { payment_method: 'pm_card_chargeDeclined', client_secret: intent.client_secret ?? '' },
      { authorization: `Bearer ${PUBLISHABLE_KEY}` },
    );

    expect(declined.status).toBe(402);
    expect(declined.body.error).toMatchObject({
      type: 'card_error',
      code: 'card_declined',
      decline_code: 'generic_decline',
      message: 'Your card was declined.',
      payment_intent: { id: intent.id, status: 'requires_payment_method', last_payment_error: { code: 'card_declined' } },
    });
    expect(JSON.stringify(declined.body)).not.toContain('metadata');
    await deliveryOf(receiver, 'payment_intent.payment_failed', intent.id);
  });

  it('refuses a wrong, another intent\'s or a missing client_secret, and changes nothing', async () => {
    const intent = await newIntent();
    const other = await newIntent();
    const confirm = (params: Record<string, string>) =>
      request('POST', `/v1/payment_intents/${intent.id}/confirm`, { payment_method: 'pm_card_visa', key: PUBLISHABLE_KEY, ...params });

    const wrong = await confirm({ client_secret: `${intent.id}_secret_guessed` });
    const othersSecret = await confirm({ client_secret: other.client_secret ?? '' });
    const missing = await confirm({});
    const readMissing = await request('GET', `/v1/payment_intents/${intent.id}`, { key: PUBLISHABLE_KEY });
    const readWrong = await request('GET', `/v1/payment_intents/${intent.id}`, { key: PUBLISHABLE_KEY, client_secret: other.client_secret ?? '' });

    const mismatch = {
      type: 'invalid_request_error',
      code: 'payment_intent_invalid_parameter',
      param: 'client_secret',
      message: 'The client_secret provided does not match the client_secret associated with the PaymentIntent.',
    };
    for (const refused of [wrong, othersSecret, readWrong]) expect(refused).toMatchObject({ status: 400, body: { error: mismatch } });
    for (const refused of [missing, readMissing]) {
      expect(refused).toMatchObject({ status: 400, body: { error: { code: 'parameter_missing', param: 'client_secret' } } });
    }
    expect(await stripe.paymentIntents.retrieve(intent.id)).toMatchObject({ status: 'requires_payment_method', latest_charge: null });
    expect(eventsOf(intent.id)).toEqual([]);
  });

  it('refuses every other call with Stripe\'s 401, whatever parameters it names, and changes nothing', async () => {
    const intent = await newIntent();
    const succeeded = await newIntent();
    await stripe.paymentIntents.confirm(succeeded.id, { payment_method: 'pm_card_visa' });
    const disputed = await newIntent();
    await stripe.paymentIntents.confirm(disputed.id, { payment_method: 'pm_card_visa' });
    const dispute = await request('POST', `/sandbox/payment_intents/${disputed.id}/dispute`, {}, { authorization: `Bearer ${SECRET_KEY}` });
    expect(dispute.status).toBe(200);
    const secret = { client_secret: intent.client_secret ?? '', key: PUBLISHABLE_KEY };
    const before = sandbox.intents().length;

    const refused = [
      await request('POST', '/v1/payment_intents', { amount: '100', currency: 'usd', key: PUBLISHABLE_KEY }),
      await request('POST', '/v1/payment_intents', { amount: '100', currency: 'usd' }, { authorization: `Bearer ${PUBLISHABLE_KEY}` }),
      await request('POST', `/v1/payment_intents/${intent.id}/cancel`, secret),
      await request('POST', '/v1/refunds', { payment_intent: succeeded.id, key: PUBLISHABLE_KEY }),
      await request('POST', `/sandbox/payment_intents/${succeeded.id}/dispute`, { key: PUBLISHABLE_KEY }),
      await request('POST', `/sandbox/disputes/${String(dispute.body.id)}/close`, { status: 'won', key: PUBLISHABLE_KEY }),
    ];

    for (const answer of refused) {
      expect(answer).toMatchObject({ status: 401, body: { error: { type: 'invalid_request_error', message: PUBLISHABLE_REFUSAL } } });
    }
    expect(sandbox.intents()).toHaveLength(before);
    expect(await stripe.paymentIntents.retrieve(intent.id)).toMatchObject({ status: 'requires_payment_method' });
    expect(await stripe.paymentIntents.retrieve(succeeded.id)).toMatchObject({ status: 'succeeded' });
    // Of these two intents (other tests' events are theirs): none of the refused calls emitted anything.
    const ofThese = sandbox.events().filter((e) => [intent.id, succeeded.id].some((id) => JSON.stringify(e.event.data.object).includes(id)));
    expect(ofThese.some((e) => ['charge.refunded', 'charge.dispute.created', 'payment_intent.canceled'].includes(e.event.type))).toBe(false);
    expect(sandbox.events().filter((e) => e.event.type === 'charge.dispute.closed' && (e.event.data.object as { id: string }).id === dispute.body.id)).toEqual([]);
  });

  it('never reads GET /sandbox/events, whose events carry every intent\'s client_secret: only the secret key does', async () => {
    // Arrange: an event carrying an intent's client_secret.
    const intent = await newIntent();
    await stripe.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_visa' });

    // Act
    const byParameter = await request('GET', '/sandbox/events', { key: PUBLISHABLE_KEY });
    const byBearer = await request('GET', '/sandbox/events', {}, { authorization: `Bearer ${PUBLISHABLE_KEY}` });
    const withoutKey = await request('GET', '/sandbox/events');
    const secretAsParameter = await request('GET', '/sandbox/events', { key: SECRET_KEY });
    const withSecretKey = await request('GET', '/sandbox/events', {}, { authorization: `Bearer ${SECRET_KEY}` });

    // Assert
    for (const refused of [byParameter, byBearer]) {
      expect(refused).toMatchObject({ status: 401, body: { error: { type: 'invalid_request_error', message: PUBLISHABLE_REFUSAL } } });
    }
    expect(withoutKey).toMatchObject({ status: 401, body: { error: { message: expect.stringContaining('You did not provide an API key') } } });
    expect(secretAsParameter).toMatchObject({ status: 401, body: { error: { message: expect.stringMatching(/^Invalid API Key provided: sk_test_\*+6789$/) } } });
    for (const refused of [byParameter, byBearer, withoutKey, secretAsParameter]) expect(JSON.stringify(refused.body)).not.toContain(intent.client_secret);
    expect(withSecretKey.status).toBe(200);
    expect(JSON.stringify(withSecretKey.body)).toContain(intent.client_secret);
  });

  it('refuses an unknown publishable key (Bearer or parameter) and a secret key sent as the parameter', async () => {
    const intent = await newIntent();
    const read = (params: Record<string, string>, headers: Record<string, string> = {}) =>
      request('GET', `/v1/payment_intents/${intent.id}`, { client_secret: intent.client_secret ?? '', ...params }, headers);

    const unknownParameter = await read({ key: 'pk_test_someone_elses_abcd' });
    const unknownBearer = await read({}, { authorization: 'Bearer pk_test_someone_elses_abcd' });
    const secretAsParameter = await read({ key: SECRET_KEY });

    for (const refused of [unknownParameter, unknownBearer]) {
      expect(refused).toMatchObject({ status: 401, body: { error: { type: 'invalid_request_error', message: 'Invalid API Key provided: pk_test_**************abcd' } } });
    }
    expect(secretAsParameter).toMatchObject({ status: 401, body: { error: { message: expect.stringMatching(/^Invalid API Key provided: sk_test_\*+6789$/) } } });
  });

  it('keeps idempotency keys per API key: a browser\'s request never replays the server\'s stored answer', async () => {
    const intent = await newIntent();
    const key = `shared-${intent.id}`;
    await stripe.paymentIntents.create({ amount: 700, currency: 'usd' }, { idempotencyKey: key });
    const confirm = () =>
      request(
        'POST',
        `/v1/payment_intents/${intent.id}/confirm`,
        { payment_method: 'pm_card_visa', client_secret: intent.client_secret ?? '', key: PUBLISHABLE_KEY },
        { 'idempotency-key': key },
      );

    const first = await confirm();
    const retried = await confirm();

    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(first.body).toMatchObject({ id: intent.id, status: 'succeeded' });
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    expect(retried.body).toEqual(first.body);
  });
});

describe('the secret key, as before', () => {
  it('makes every call through the SDK and reads the whole intent, metadata included; `key` is not a parameter of the handler', async () => {
    const intent = await newIntent();

    const retrieved = await stripe.paymentIntents.retrieve(intent.id);
    const withKeyParameter = await request('GET', `/v1/payment_intents/${intent.id}`, { key: PUBLISHABLE_KEY }, { authorization: `Bearer ${SECRET_KEY}` });
    const canceled = await stripe.paymentIntents.cancel(intent.id);

    expect(retrieved).toMatchObject({ metadata: { svc_tx_id: 'tx_browser' }, amount_received: 0, latest_charge: null });
    expect(withKeyParameter).toMatchObject({ status: 200, body: { id: intent.id, metadata: { svc_tx_id: 'tx_browser' } } });
    expect(canceled.status).toBe('canceled');
  });
});

describe('CORS, as Stripe\'s API answers browsers', () => {
  it('answers /v1 requests, refusals included, to any origin without credentials', async () => {
    const intent = await newIntent();

    const read = await request('GET', `/v1/payment_intents/${intent.id}`, { client_secret: intent.client_secret ?? '', key: PUBLISHABLE_KEY });
    const refused = await request('POST', '/v1/payment_intents', { amount: '100', currency: 'usd', key: PUBLISHABLE_KEY });
    const sandboxOnly = await request('GET', '/sandbox/events', {}, { authorization: `Bearer ${SECRET_KEY}` });

    for (const answer of [read, refused]) {
      expect(answer.headers.get('access-control-allow-origin')).toBe('*');
      expect(answer.headers.get('access-control-allow-credentials')).toBeNull();
    }
    expect(sandboxOnly.status).toBe(200);
    expect(sandboxOnly.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('answers a preflight with 204, the methods and headers allowed (never authorization: a page may not send the secret key), for 10 minutes, without authentication', async () => {
    const preflight = await request('OPTIONS', '/v1/payment_intents/pi_anything/confirm', {}, {
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, idempotency-key',
    });

    expect(preflight.status).toBe(204);
    expect(Object.fromEntries([...preflight.headers].filter(([name]) => name.startsWith('access-control-')))).toEqual({
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'GET, POST',
      'access-control-allow-headers': 'content-type, idempotency-key, stripe-version',
      'access-control-max-age': '600',
    });
  });
});

describe('x-content-type-options: nosniff', () => {
  it('is on every answer: /v1 (read, refused, unknown), /sandbox, a preflight, the stand-in', async () => {
    const intent = await newIntent();

    const answers = [
      await request('GET', `/v1/payment_intents/${intent.id}`, { client_secret: intent.client_secret ?? '', key: PUBLISHABLE_KEY }),
      await request('POST', '/v1/payment_intents', { amount: '100', currency: 'usd', key: PUBLISHABLE_KEY }),
      await request('GET', '/v1/customers', {}, { authorization: `Bearer ${SECRET_KEY}` }),
      await request('GET', '/sandbox/events', {}, { authorization: `Bearer ${SECRET_KEY}` }),
      await request('POST', `/sandbox/payment_intents/${intent.id}/dispute`, {}, { authorization: `Bearer ${SECRET_KEY}` }),
      await request('OPTIONS', '/v1/payment_intents', {}, { 'access-control-request-method': 'POST' }),
      await request('GET', '/nowhere'),
    ];
    const standIn = await fetch(`${sandbox.url}/v3/`);

    expect(answers.map((answer) => answer.status)).toEqual([200, 401, 404, 200, 400, 204, 404]);
    for (const answer of answers) expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
    expect(standIn.headers.get('x-content-type-options')).toBe('nosniff');
  });
});

describe('the Stripe.js stand-in', () => {
  it('is served at /v3, /v3/ and /v3/stripe.js as a script any page may load, without authentication', async () => {
    const answers = await Promise.all(['/v3', '/v3/', '/v3/stripe.js'].map((path) => fetch(`${sandbox.url}${path}`)));
    const sources = await Promise.all(answers.map((answer) => answer.text()));

    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect(answer.headers.get('cache-control')).toBe('no-cache');
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
      expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    }
    expect(sources[0]).toContain('window).Stripe = Stripe');
    expect(new Set(sources).size).toBe(1);
    expect((await fetch(`${sandbox.url}/v3/other.js`)).status).toBe(404);
  });
});
