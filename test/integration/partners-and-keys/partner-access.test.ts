/**
 * The controls every partner mutation goes through (interface-spec.md Authentication; decisions.md §3-4),
 * over HTTP against the local API.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from '../../../lib/store/dynamo';
import { keys } from '../../../lib/store/keys';
import { rateLimitClock } from '../../../lib/store/rate-limits';
import { sign, usePartnerSuite } from '../../support/api';

const suite = usePartnerSuite();

const newClient = (overrides: Record<string, unknown> = {}) => ({
  client_id: `merchant-${randomUUID()}`,
  legal_name: 'Merchant Ltd',
  ...overrides,
});

describe('auth errors of a partner mutation (POST /clients)', () => {
  const body = JSON.stringify(newClient());
  const headers = () => ({
    'content-type': 'application/json',
    'x-api-key': suite.partner.apiKey,
    'x-svc-hmac': sign(suite.partner.hmacSecret, body),
    'idempotency-key': randomUUID(),
  });
  const without = (name: string) => Object.fromEntries(Object.entries(headers()).filter(([header]) => header !== name));

  it.each([
    ['x-api-key absent', () => without('x-api-key'), 401, 'API_KEY_MISSING'],
    ['x-api-key unknown', () => ({ ...headers(), 'x-api-key': 'svc_partner_not-a-real-key' }), 401, 'API_KEY_INVALID'],
    ['x-svc-hmac absent', () => without('x-svc-hmac'), 401, 'HMAC_MISSING'],
    ['x-svc-hmac over another body', () => ({ ...headers(), 'x-svc-hmac': sign(suite.partner.hmacSecret, `${body} `) }), 401, 'HMAC_INVALID'],
    ['x-svc-hmac with another secret', () => ({ ...headers(), 'x-svc-hmac': sign('svc_hmac_wrong', body) }), 401, 'HMAC_INVALID'],
    ['x-svc-hmac not hex', () => ({ ...headers(), 'x-svc-hmac': 'not-a-signature' }), 401, 'HMAC_INVALID'],
    ['idempotency-key absent', () => without('idempotency-key'), 400, 'IDEMPOTENCY_KEY_MISSING'],
    ['idempotency-key too long', () => ({ ...headers(), 'idempotency-key': 'k'.repeat(256) }), 400, 'VALIDATION_ERROR'],
  ])('%s -> %i %s', async (_name, makeHeaders, status, code) => {
    const response = await suite.api.request('POST', '/clients', { headers: makeHeaders(), body });

    expect(response.status).toBe(status);
    expect(response.body.code).toBe(code);
    expect(typeof response.body.error).toBe('string');
  });

  it('accepts the signature in upper-case hex too (the digest is the same bytes)', async () => {
    const response = await suite.api.request('POST', '/clients', { headers: { ...headers(), 'x-svc-hmac': sign(suite.partner.hmacSecret, body).toUpperCase() }, body });

    expect(response.status).toBe(201);
  });
});

describe('auth errors of partner reads (GET /clients)', () => {
  it('answers 401 API_KEY_MISSING without a key and 401 API_KEY_INVALID with a wrong one', async () => {
    const missing = await suite.api.request('GET', '/clients');
    const invalid = await suite.api.read({ apiKey: 'svc_partner_nope' }, '/clients');

    expect(missing.status).toBe(401);
    expect(missing.body.code).toBe('API_KEY_MISSING');
    expect(invalid.status).toBe(401);
    expect(invalid.body.code).toBe('API_KEY_INVALID');
  });
});

describe('key scope', () => {
  it('refuses a platform-wide key on /clients with 403 API_KEY_SCOPE_FORBIDDEN', async () => {
    const platform = await suite.api.createPlatformKey();

    const create = await suite.api.signed(platform, '/clients', newClient());
    const list = await suite.api.read(platform, '/clients');

    expect(create.status).toBe(403);
    expect(create.body.code).toBe('API_KEY_SCOPE_FORBIDDEN');
    expect(list.status).toBe(403);
    expect(list.body.code).toBe('API_KEY_SCOPE_FORBIDDEN');
  });

  it('refuses a body or query partner_id naming another partner with 403 API_KEY_SCOPE_FORBIDDEN', async () => {
    const other = await suite.api.createPartner();

    const create = await suite.api.signed(suite.partner, '/clients', newClient({ partner_id: other.partnerId }));
    const list = await suite.api.read(suite.partner, `/clients?partner_id=${other.partnerId}`);
    const own = await suite.api.signed(suite.partner, '/clients', newClient({ partner_id: suite.partner.partnerId }));

    expect(create.status).toBe(403);
    expect(create.body.code).toBe('API_KEY_SCOPE_FORBIDDEN');
    expect(list.status).toBe(403);
    expect(own.status).toBe(201);
  });

  it('refuses a query partner_id naming another partner on routes that do not read the query too (a mutation, a read by id)', async () => {
    const other = await suite.api.createPartner();
    const query = `?partner_id=${other.partnerId}`;

    const create = await suite.api.signed(suite.partner, `/clients${query}`, newClient());
    const read = await suite.api.read(suite.partner, `/transactions/svc_tx_${'0'.repeat(24)}${query}`);
    const ownQuery = await suite.api.signed(suite.partner, `/clients?partner_id=${suite.partner.partnerId}`, newClient());

    expect({ status: create.status, code: create.body.code }).toEqual({ status: 403, code: 'API_KEY_SCOPE_FORBIDDEN' });
    expect({ status: read.status, code: read.body.code }).toEqual({ status: 403, code: 'API_KEY_SCOPE_FORBIDDEN' });
    expect(ownQuery.status).toBe(201);
  });
});

describe('partner state', () => {
  it('answers 403 PARTNER_SUSPENDED on /clients while the partner is suspended, and works again once active', async () => {
    const suspended = await suite.api.createPartner();
    await suite.api.admin('PATCH', `/admin/partners/${suspended.partnerId}`, { status: 'suspended' });

    const create = await suite.api.signed(suspended, '/clients', newClient());
    const list = await suite.api.read(suspended, '/clients');
    await suite.api.admin('PATCH', `/admin/partners/${suspended.partnerId}`, { status: 'active' });
    const afterReactivation = await suite.api.read(suspended, '/clients');

    expect(create.status).toBe(403);
    expect(create.body.code).toBe('PARTNER_SUSPENDED');
    expect(list.status).toBe(403);
    expect(list.body.code).toBe('PARTNER_SUSPENDED');
    expect(afterReactivation.status).toBe(200);
  });

  it('does not store the 403: the same idempotency key works once the partner is active again', async () => {
    const paused = await suite.api.createPartner();
    await suite.api.admin('PATCH', `/admin/partners/${paused.partnerId}`, { status: 'suspended' });
    const key = `paused-${randomUUID()}`;
    const body = newClient();

    const refused = await suite.api.signed(paused, '/clients', body, { idempotencyKey: key });
    await suite.api.admin('PATCH', `/admin/partners/${paused.partnerId}`, { status: 'active' });
    const accepted = await suite.api.signed(paused, '/clients', body, { idempotencyKey: key });

    expect(refused.status).toBe(403);
    expect(accepted.status).toBe(201);
    expect(accepted.body.idempotentReplay).toBeUndefined();
  });

  it('answers 404 PARTNER_NOT_FOUND once the partner no longer exists', async () => {
    const gone = await suite.api.createPartner();
    await documentClient.send(new DeleteCommand({ TableName: tableName, Key: keys.partner(gone.partnerId) }));

    const list = await suite.api.read(gone, '/clients');
    const create = await suite.api.signed(gone, '/clients', newClient());

    expect(list.status).toBe(404);
    expect(list.body.code).toBe('PARTNER_NOT_FOUND');
    expect(create.status).toBe(404);
    expect(create.body.code).toBe('PARTNER_NOT_FOUND');
  });
});

describe('revocation', () => {
  it('stops a revoked key at once', async () => {
    const own = await suite.api.createPartner();
    const before = await suite.api.read(own, '/clients');

    const revoked = await suite.api.admin('DELETE', `/admin/api-keys/${own.keyId}`);
    const after = await suite.api.read(own, '/clients');
    const mutation = await suite.api.signed(own, '/clients', newClient());

    expect(before.status).toBe(200);
    expect(revoked.status).toBe(204);
    expect(after.status).toBe(401);
    expect(after.body.code).toBe('API_KEY_INVALID');
    expect(mutation.status).toBe(401);
    expect(mutation.body.code).toBe('API_KEY_INVALID');
  });
});

describe('idempotency', () => {
  it('replays the first response with idempotentReplay and Idempotent-Replayed, and refuses a changed body with 422', async () => {
    const key = `create-${randomUUID()}`;
    const body = newClient();

    const first = await suite.api.signed(suite.partner, '/clients', body, { idempotencyKey: key });
    const replay = await suite.api.signed(suite.partner, '/clients', body, { idempotencyKey: key });
    const changed = await suite.api.signed(suite.partner, '/clients', { ...body, legal_name: 'Other Ltd' }, { idempotencyKey: key });

    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(first.body.idempotentReplay).toBeUndefined();
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual({ ...first.body, idempotentReplay: true });
    expect(changed.status).toBe(422);
    expect(changed.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('keys idempotency per partner: two partners may use the same key', async () => {
    const other = await suite.api.createPartner();
    const key = `shared-${randomUUID()}`;
    const body = newClient();

    const mine = await suite.api.signed(suite.partner, '/clients', body, { idempotencyKey: key });
    const theirs = await suite.api.signed(other, '/clients', body, { idempotencyKey: key });

    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.body.partner_id).toBe(other.partnerId);
  });

  it('10 concurrent identical requests with one key create exactly one client', async () => {
    const own = await suite.api.createPartner();
    const key = `concurrent-${randomUUID()}`;
    const body = newClient();

    const responses = await Promise.all(
      Array.from({ length: 10 }, () => suite.api.signed(own, '/clients', body, { idempotencyKey: key })),
    );

    const created = responses.filter((response) => response.status === 201 && response.body.idempotentReplay === undefined);
    const replays = responses.filter((response) => response.status === 201 && response.body.idempotentReplay === true);
    const inUse = responses.filter((response) => response.status === 409);
    expect(created).toHaveLength(1);
    expect(created.length + replays.length + inUse.length).toBe(10);
    for (const response of inUse) {
      expect(response.body.code).toBe('IDEMPOTENCY_KEY_IN_USE');
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    for (const replay of replays) expect(replay.body.id).toBe(created[0]?.body.id);
    const list = await suite.api.read(own, '/clients?limit=200');
    expect(list.body.items.filter((client: { client_id: string }) => client.client_id === body.client_id)).toHaveLength(1);
  });

  it('does not store a validation failure: the same key with a corrected body goes through', async () => {
    const key = `fix-${randomUUID()}`;

    const invalid = await suite.api.signed(suite.partner, '/clients', { client_id: 'x' }, { idempotencyKey: key });
    const malformed = await suite.api.signed(suite.partner, '/clients', undefined, { idempotencyKey: key, rawBody: '{"client_id":' });
    const corrected = await suite.api.signed(suite.partner, '/clients', newClient(), { idempotencyKey: key });

    expect(invalid.status).toBe(400);
    expect(invalid.body.code).toBe('VALIDATION_ERROR');
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe('VALIDATION_ERROR');
    expect(corrected.status).toBe(201);
  });

  it('does not store an auth failure: a correctly signed retry with the same key goes through', async () => {
    const key = `auth-${randomUUID()}`;
    const body = newClient();

    const badSignature = await suite.api.signed(suite.partner, '/clients', body, { idempotencyKey: key, headers: { 'x-svc-hmac': sign('svc_hmac_wrong', JSON.stringify(body)) } });
    const retry = await suite.api.signed(suite.partner, '/clients', body, { idempotencyKey: key });

    expect(badSignature.status).toBe(401);
    expect(retry.status).toBe(201);
    expect(retry.body.idempotentReplay).toBeUndefined();
  });

  it('stores and replays a business outcome such as 409 CLIENT_EXISTS', async () => {
    const body = newClient();
    await suite.api.signed(suite.partner, '/clients', body);
    const key = `dup-${randomUUID()}`;

    const duplicate = await suite.api.signed(suite.partner, '/clients', body, { idempotencyKey: key });
    const replay = await suite.api.signed(suite.partner, '/clients', body, { idempotencyKey: key });

    expect(duplicate.status).toBe(409);
    expect(duplicate.body).toEqual({ error: expect.any(String), code: 'CLIENT_EXISTS' });
    expect(replay.status).toBe(409);
    expect(replay.body).toEqual({ ...duplicate.body, idempotentReplay: true });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
  });
});

describe('rate limiting', () => {
  // Each test pins the rate limiter's clock inside one window (so nothing waits for a minute boundary) and
  // uses partners of its own, so windows never collide.
  const WINDOW_START_MS = Date.UTC(2031, 0, 1, 12, 0, 0);
  const at = (offsetMs: number) => {
    rateLimitClock.now = () => WINDOW_START_MS + offsetMs;
  };
  afterEach(() => {
    rateLimitClock.now = () => Date.now();
  });

  const statuses = (responses: Array<{ status: number }>) => responses.map((response) => response.status);

  it('answers the 4th mutation of a window with 429 RATE_LIMITED and the seconds left, leaves other partners and reads alone, and opens again in the next window', async () => {
    const limited = await suite.api.createPartner({ rate_limit_per_minute: 3 });
    const other = await suite.api.createPartner({ rate_limit_per_minute: 3 });
    at(45_000);

    const firstThree = [];
    for (let i = 0; i < 3; i++) firstThree.push(await suite.api.signed(limited, '/clients', newClient()));
    const fourth = await suite.api.signed(limited, '/clients', newClient());
    const otherPartner = await suite.api.signed(other, '/clients', newClient());
    const read = await suite.api.read(limited, '/clients');
    at(60_000);
    const nextWindow = await suite.api.signed(limited, '/clients', newClient());

    expect(statuses(firstThree)).toEqual([201, 201, 201]);
    expect(fourth.status).toBe(429);
    expect(fourth.body).toEqual({ error: expect.any(String), code: 'RATE_LIMITED' });
    expect(fourth.headers.get('retry-after')).toBe('15');
    expect(otherPartner.status).toBe(201);
    expect(read.status).toBe(200);
    expect(nextWindow.status).toBe(201);
  });

  it("does not count requests with a wrong signature: 100 of them leave the partner's full quota", async () => {
    // Arrange: someone holds the partner's API key but not its HMAC secret
    const victim = await suite.api.createPartner({ rate_limit_per_minute: 3 });
    const leaked = { apiKey: victim.apiKey, hmacSecret: 'svc_hmac_guessed' };
    at(10_000);

    // Act
    const forged = [];
    for (let batch = 0; batch < 10; batch++) {
      forged.push(...(await Promise.all(Array.from({ length: 10 }, () => suite.api.signed(leaked, '/clients', newClient())))));
    }
    const genuine = [];
    for (let i = 0; i < 4; i++) genuine.push(await suite.api.signed(victim, '/clients', newClient()));

    // Assert
    expect(forged).toHaveLength(100);
    expect(new Set(forged.map((response) => `${response.status} ${response.body.code}`))).toEqual(new Set(['401 HMAC_INVALID']));
    expect(statuses(genuine)).toEqual([201, 201, 201, 429]);
  }, 30_000);

  it("holds a platform key acting for a partner to that partner's rate_limit_per_minute", async () => {
    // Arrange
    const platform = await suite.api.createPlatformKey();
    const partner = await suite.api.createPartner({ rate_limit_per_minute: 3 });
    const clientId = await suite.api.createClient(partner);
    const other = await suite.api.createPartner({ rate_limit_per_minute: 3 });
    const otherClientId = await suite.api.createClient(other);
    const initialize = (partnerId: string, client: string) =>
      suite.api.signed(platform, '/transactions/initialize', {
        partner_id: partnerId,
        client_id: client,
        amount: 10,
        currency: 'USD',
        partner_reference: `order-${randomUUID()}`,
      });
    at(30_000);

    // Act
    const forPartner = [];
    for (let i = 0; i < 4; i++) forPartner.push(await initialize(partner.partnerId, clientId));
    const forOther = await initialize(other.partnerId, otherClientId);

    // Assert
    expect(statuses(forPartner)).toEqual([201, 201, 201, 429]);
    expect(forPartner[3]?.body.code).toBe('RATE_LIMITED');
    expect(forOther.status).toBe(201);
  });
});
