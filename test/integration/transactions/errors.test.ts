/** Every error row of checkout-intent and initialize (interface-spec.md; decisions.md §3, §5). */
import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { type PartnerCredentials, usePartnerSuite } from '../../support/api';

const suite = usePartnerSuite();

const body = (overrides: Record<string, unknown> = {}) => ({
  partner_id: suite.partner.partnerId,
  client_id: suite.clientId,
  amount: 12.34,
  currency: 'USD',
  email: 'buyer@example.com',
  partner_reference: `order-${randomUUID()}`,
  ...overrides,
});

const endpoints = ['/transactions/checkout-intent', '/transactions/initialize', '/transactions/checkout-intent-v2'];

/** The legacy initialize takes no e-mail or statement descriptor (its body is strict). */
const forEndpoint = (path: string, payload: Record<string, unknown>) => {
  if (path !== '/transactions/initialize') return payload;
  const { email: _email, statement_descriptor_suffix: _suffix, ...rest } = payload;
  return rest;
};

describe.each(endpoints)('POST %s', (path) => {
  const send = (payload: Record<string, unknown>, credentials: Pick<PartnerCredentials, 'apiKey' | 'hmacSecret'> = suite.partner) =>
    suite.api.signed(credentials, path, forEndpoint(path, payload));

  it('answers 404 PARTNER_NOT_FOUND for a partner that does not exist (platform key)', async () => {
    const platform = await suite.api.createPlatformKey();

    const response = await send(body({ partner_id: 'ptr_doesnotexist' }), platform);

    expect(response.status).toBe(404);
    expect(response.body.code).toBe('PARTNER_NOT_FOUND');
  });

  it('answers 403 API_KEY_SCOPE_FORBIDDEN when a partner key names another partner', async () => {
    const other = await suite.api.createPartner();

    const response = await send(body({ partner_id: other.partnerId }));

    expect(response.status).toBe(403);
    expect(response.body.code).toBe('API_KEY_SCOPE_FORBIDDEN');
  });

  it('answers 403 PARTNER_NOT_ACTIVE for a suspended partner, and 403 KYC_NOT_APPROVED before KYC approval', async () => {
    const suspended = await suite.api.createPartner();
    const suspendedClient = await suite.api.createClient(suspended);
    await suite.api.admin('PATCH', `/admin/partners/${suspended.partnerId}`, { status: 'suspended' });
    const unapproved = await suite.api.createPartner({ kyc_status: 'pending' });
    const unapprovedClient = await suite.api.createClient(unapproved);

    const notActive = await suite.api.signed(suspended, path, forEndpoint(path, body({ partner_id: suspended.partnerId, client_id: suspendedClient })));
    const noKyc = await suite.api.signed(unapproved, path, forEndpoint(path, body({ partner_id: unapproved.partnerId, client_id: unapprovedClient })));

    expect(notActive.status).toBe(403);
    expect(notActive.body.code).toBe('PARTNER_NOT_ACTIVE');
    expect(noKyc.status).toBe(403);
    expect(noKyc.body.code).toBe('KYC_NOT_APPROVED');
  });

  it("answers 404 CLIENT_NOT_FOUND for an unknown client and for another partner's client", async () => {
    const other = await suite.api.createPartner();
    const theirClient = await suite.api.createClient(other);

    const unknown = await send(body({ client_id: 'no-such-merchant' }));
    const foreign = await send(body({ client_id: theirClient }));

    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('CLIENT_NOT_FOUND');
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('CLIENT_NOT_FOUND');
  });

  it('answers 403 CLIENT_NOT_ACTIVE for a suspended or pending_kyc client', async () => {
    const suspended = await suite.api.createClient(suite.partner, { status: 'suspended' });
    const pendingKyc = await suite.api.createClient(suite.partner, { status: 'pending_kyc' });

    for (const client of [suspended, pendingKyc]) {
      const response = await send(body({ client_id: client }));
      expect(response.status).toBe(403);
      expect(response.body.code).toBe('CLIENT_NOT_ACTIVE');
    }
  });

  it.each([
    [{ amount: 0 }, 'amount'],
    [{ amount: -5 }, 'amount'],
    [{ amount: 12.345 }, 'amount'],
    [{ amount: 1000000 }, 'amount'],
    [{ amount: '12.34' }, 'amount'],
    [{ currency: 'QQQ' }, 'currency'],
    [{ currency: 'US' }, 'currency'],
    [{ currency: 'JPY', amount: 100.5 }, 'amount'],
    [{ partner_reference: '' }, 'partner_reference'],
    [{ client_id: undefined }, 'client_id'],
    [{ meta: [1, 2] }, 'meta'],
    [{ meta: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])) }, 'meta'],
    [{ meta: { blob: 'x'.repeat(4100) } }, 'meta'],
  ])('answers 400 VALIDATION_ERROR for %j (field %s)', async (overrides, field) => {
    const response = await send(body(overrides));

    expect(response.status).toBe(400);
    expect(response.body.code).toBe('VALIDATION_ERROR');
    expect(Object.keys(response.body.details.fieldErrors)).toContain(field);
  });

  it('keeps any JSON object as meta, exactly: nesting to the limit, extreme numbers, empty keys', async () => {
    // meta itself is level 1, `deep` level 2, and 30 more levels below it: 32 in all, the limit
    let deep: Record<string, unknown> = { leaf: true };
    for (let i = 0; i < 30; i++) deep = { d: deep };
    const meta = { deep, tiny: 1e-200, huge: 1e200, '': 'empty key', nested: { '': [1, 'two', null] } };

    const response = await send(body({ meta }));
    const read = await suite.api.read(suite.partner, `/transactions/${response.body.svc_tx_id}`);
    const tooDeep = await send(body({ meta: { ...meta, deep: { d: deep } } }));

    expect(response.status).toBe(201);
    expect(read.body.meta).toEqual(meta);
    expect(tooDeep.status).toBe(400);
    expect(tooDeep.body.details.fieldErrors.meta).toEqual([expect.stringContaining('32 levels')]);
  });

  it('answers 400 on meta, not 500, for meta nested 10,000 levels deep', async () => {
    const deepMeta = `{"a":${'['.repeat(10_000)}1${']'.repeat(10_000)}}`; // 20 KB: within the body limit
    const rawBody = JSON.stringify(forEndpoint(path, body())).replace(/}$/, `,"meta":${deepMeta}}`);

    const response = await suite.api.signed(suite.partner, path, undefined, { rawBody });

    expect(response.status).toBe(400);
    expect(Object.keys(response.body.details.fieldErrors)).toEqual(['meta']);
  });

  it('answers 413 PAYLOAD_TOO_LARGE to a 6 MB signed body before reading it, and releases its idempotency key', async () => {
    // Arrange: meta holding 3,000,000 numbers; then the largest body the route takes, as Python's json.dumps
    // writes it by default (every non-ASCII character escaped, 6 bytes each) and indented
    const idempotencyKey = randomUUID();
    const oversized = JSON.stringify(forEndpoint(path, body())).replace(/}$/, `,"meta":{"a":[${new Array(3_000_000).fill(0).join(',')}]}}`);
    const largest = forEndpoint(path, body({ partner_reference: 'é'.repeat(255), meta: { s: 'é'.repeat(2044) } }));
    const largestText = JSON.stringify(largest, null, 2).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

    // Act
    const refused = await suite.api.signed(suite.partner, path, undefined, { rawBody: oversized, idempotencyKey });
    const refusedAgain = await suite.api.signed(suite.partner, path, undefined, { rawBody: oversized, idempotencyKey });
    const taken = await suite.api.signed(suite.partner, path, undefined, { rawBody: largestText, idempotencyKey });

    // Assert: the refusal was not stored (no replay, and the key serves another body)
    expect(refused.status).toBe(413);
    expect(refused.body).toEqual({ error: expect.stringContaining('too large'), code: 'PAYLOAD_TOO_LARGE' });
    expect(refusedAgain.headers.get('idempotent-replayed')).toBeNull();
    expect(refusedAgain.status).toBe(413);
    expect(Buffer.byteLength(largestText)).toBeGreaterThan(3 * 4096); // meta alone is 4,096 bytes as JSON.stringify writes it
    expect(taken.status).toBe(201);
  });

  it('answers 400 on partner_reference for 251 emoji (under 255 characters, but 502 UTF-16 units: more than the processor keeps)', async () => {
    const response = await send(body({ partner_reference: '😀'.repeat(251) }));

    expect(response.status).toBe(400);
    expect(Object.keys(response.body.details.fieldErrors)).toEqual(['partner_reference']);
  });

  it('accepts 250 emoji as partner_reference (500 UTF-16 units) and keeps them', async () => {
    const reference = '😀'.repeat(250);

    const response = await send(body({ partner_reference: reference }));
    const read = await suite.api.read(suite.partner, `/transactions/${response.body.svc_tx_id}`);

    expect(response.status).toBe(201);
    expect(read.body.partnerReference).toBe(reference);
  });

  it.each([
    [{ partner_reference: 'x\ud800' }, 'partner_reference'],
    [{ meta: { note: 'x\udc00y' } }, 'meta'],
    [{ meta: { 'key\ud83d': 1 } }, 'meta'],
    [{ meta: { list: [['\ud800']] } }, 'meta'],
  ])('answers 400 on the field, not 500, for a lone surrogate in %j', async (overrides, field) => {
    const response = await send(body(overrides));

    expect(response.status).toBe(400);
    expect(response.body.code).toBe('VALIDATION_ERROR');
    expect(Object.keys(response.body.details.fieldErrors)).toEqual([field]);
  });

  it('keeps meta keys named __proto__ and constructor, and returns them exactly as given', async () => {
    const metaText = '{"__proto__":{"a":1},"constructor":1}';
    const rawBody = JSON.stringify(forEndpoint(path, body())).replace(/}$/, `,"meta":${metaText}}`);

    const response = await suite.api.signed(suite.partner, path, undefined, { rawBody });
    const read = await suite.api.read(suite.partner, `/transactions/${response.body.svc_tx_id}`);

    expect(response.status).toBe(201);
    expect(JSON.stringify(read.body.meta)).toBe(metaText);
  });

  it('accepts amounts at the currency limits: 3 decimals in KWD, whole JPY, lower-case currency', async () => {
    for (const overrides of [{ amount: 1.25, currency: 'kwd' }, { amount: 500, currency: 'JPY' }, { amount: 999999.99, currency: 'usd' }, { amount: 1500, currency: 'ISK' }]) {
      const response = await send(body(overrides));
      expect(response.status).toBe(201);
      const read = await suite.api.read(suite.partner, `/transactions/${response.body.svc_tx_id}`);
      expect(read.body.amount).toBe(overrides.amount);
      expect(read.body.currency).toBe(overrides.currency.toUpperCase());
    }
  });
});

describe('platform keys', () => {
  it('key idempotency by the partner named in the body: one key may serve two partners', async () => {
    const platform = await suite.api.createPlatformKey();
    const other = await suite.api.createPartner();
    const otherClient = await suite.api.createClient(other);
    const key = `platform-${randomUUID()}`;
    const initialize = (partnerId: string, clientId: string) =>
      suite.api.signed(platform, '/transactions/initialize', { partner_id: partnerId, client_id: clientId, amount: 5, currency: 'USD', partner_reference: 'same-ref' }, { idempotencyKey: key });

    const forA = await initialize(suite.partner.partnerId, suite.clientId);
    const forB = await initialize(other.partnerId, otherClient);
    const forAAgain = await initialize(suite.partner.partnerId, suite.clientId);

    expect(forA.status).toBe(201);
    expect(forB.status).toBe(201);
    expect(forB.body.svc_tx_id).not.toBe(forA.body.svc_tx_id);
    expect(forAAgain.body).toEqual({ ...forA.body, idempotentReplay: true });
  });
});

describe('amounts the processor cannot take', () => {
  it('checkout-intent refuses 1.005 KWD (Stripe takes three-decimal amounts in steps of 0.010) with 400 on amount; initialize keeps it', async () => {
    const checkout = await suite.api.signed(suite.partner, '/transactions/checkout-intent', body({ amount: 1.005, currency: 'KWD' }));
    const initialize = await suite.api.signed(suite.partner, '/transactions/initialize', forEndpoint('/transactions/initialize', body({ amount: 1.005, currency: 'KWD' })));

    expect(checkout.status).toBe(400);
    expect(checkout.body.details.fieldErrors.amount).toEqual([expect.stringContaining('0.010')]);
    expect(initialize.status).toBe(201);
  });
});

describe('checkout-only fields', () => {
  it.each([
    [{ email: 'not-an-email' }, 'email'],
    [{ email: undefined }, 'email'],
    [{ statement_descriptor_suffix: '' }, 'statement_descriptor_suffix'],
    [{ statement_descriptor_suffix: 'x'.repeat(23) }, 'statement_descriptor_suffix'],
    [{ statement_descriptor_suffix: 'ORDER#1' }, 'statement_descriptor_suffix'],
  ])('checkout-intent answers 400 VALIDATION_ERROR for %j', async (overrides, field) => {
    const response = await suite.api.signed(suite.partner, '/transactions/checkout-intent', body(overrides));

    expect(response.status).toBe(400);
    expect(Object.keys(response.body.details.fieldErrors)).toEqual([field]);
  });

  it('initialize refuses checkout-only fields (no intent, no statement descriptor)', async () => {
    const response = await suite.api.signed(suite.partner, '/transactions/initialize', { ...forEndpoint('/transactions/initialize', body()), statement_descriptor_suffix: 'X' });

    expect(response.status).toBe(400);
    expect(response.body.details.formErrors.join(' ')).toContain('statement_descriptor_suffix');
  });
});

describe('auth rows of the transaction mutations', () => {
  const payloadFor = (path: string) =>
    JSON.stringify(
      path === '/transactions/attach-intent'
        ? { svc_tx_id: 'svc_tx_000000000000000000000000', processor_payment_intent_id: 'pi_000000000000000000000000' }
        : forEndpoint(path, body()),
    );

  it.each([...endpoints, '/transactions/attach-intent'])('%s: API_KEY_INVALID, HMAC_INVALID, IDEMPOTENCY_KEY_MISSING', async (path) => {
    const payload = payloadFor(path);

    const badKey = await suite.api.signed({ apiKey: 'svc_partner_bogus', hmacSecret: suite.partner.hmacSecret }, path, undefined, { rawBody: payload });
    const badHmac = await suite.api.signed({ apiKey: suite.partner.apiKey, hmacSecret: 'svc_hmac_bogus' }, path, undefined, { rawBody: payload });
    const noKey = await suite.api.request('POST', path, {
      headers: { 'content-type': 'application/json', 'x-api-key': suite.partner.apiKey, 'x-svc-hmac': (await import('../../support/api')).sign(suite.partner.hmacSecret, payload) },
      body: payload,
    });

    expect([badKey.status, badKey.body.code]).toEqual([401, 'API_KEY_INVALID']);
    expect([badHmac.status, badHmac.body.code]).toEqual([401, 'HMAC_INVALID']);
    expect([noKey.status, noKey.body.code]).toEqual([400, 'IDEMPOTENCY_KEY_MISSING']);
  });
});
