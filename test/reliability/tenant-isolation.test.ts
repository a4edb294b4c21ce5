/**
 * Tenant isolation (decisions.md §5 "Scope", "Reading another partner's resource answers 404"; §7; docs/
 * authentication.md): partner B, with its own API key and HMAC secret, against EVERY route of the route table
 * (`lib/routes.ts`, iterated, so a new route is probed the day it is added), using partner A's identifiers:
 * `svc_tx_id`s, client ids, settlement batch ids, payment intent ids, list cursors, idempotency keys, and
 * `partner_id` in bodies and queries.
 *
 * Each route's kind is read from its function (`functions/<name>.ts`, `access: '...'`):
 * - partner routes get tailored probes (every one must have some: a new partner route fails `has tailored probes`
 *   until it gets its own) and a generic one (A's ids in every path parameter, `partner_id` of A in the query, A's
 *   ids in the body): refused with the documented 403/404 (or 400 where the docs say so), or answered with B's own
 *   data only;
 * - admin routes must refuse B's key however it is presented, and admin tokens B forged (401 ADMIN_TOKEN_INVALID);
 * - public routes are not partner-scoped (health, the public branding packet, the processor's signed webhook) and
 *   are skipped.
 * A leak is any probe answered otherwise, or whose body holds anything of A's that the probe did not send. Then A's
 * world is read back, unchanged. Leaks must be 0.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { API_PREFIX, type RouteDefinition, routeKey, routes } from '../../lib/routes';
import { config } from '../../lib/config';
import { type PartnerCredentials, sign, TestApi } from '../support/api';
import { accessOf, type Answer, type Expect, leakOf, type Probe, send } from '../support/reliability/probes';
import { railTransfers, refund, transactionIn } from '../support/settlement';

const TEST_TIMEOUT_MS = 60_000;

let api: TestApi;
/** Partner A's world: everything B must neither see nor touch. */
const a = {} as {
  partner: PartnerCredentials;
  name: string;
  shared: string;
  only: string;
  legalNames: string[];
  clientRecordIds: string[];
  checkout: { svcTxId: string; intentId: string; clientSecret: string; reference: string; rawBody: string; key: string };
  initialized: string;
  settled: string[];
  waiting: string;
  waitingOther: string;
  batches: string[];
  endpointId: string;
  deliveryId: string;
  cursors: { transactions: string; clients: string; settlements: string; balances: string };
  metaMarker: string;
};
/**
 * Partner B: its own key and secret, a client with A's shared client_id, a checkout and an initialized transaction,
 * and two admin tokens it forged: HS256 with its own HMAC secret as the key, and an unsigned one (`alg: none`).
 */
const b = {} as { partner: PartnerCredentials; shared: string; checkout: string; initialized: string; forged: { hs256: string; none: string } };

const checkoutBody = (partnerId: string, clientId: string, extra: Record<string, unknown> = {}) => ({
  partner_id: partnerId,
  client_id: clientId,
  amount: 49.99,
  currency: 'EUR',
  email: 'buyer@example.com',
  partner_reference: `order-${randomUUID()}`,
  ...extra,
});

async function must<T>(what: string, call: Promise<{ status: number; body: T }>, status: number): Promise<T> {
  const response = await call;
  if (response.status !== status) throw new Error(`${what}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

beforeAll(async () => {
  api = await TestApi.start();
  const tag = randomUUID().slice(0, 8);
  // A: a partner with two clients (one client_id B will also use), an endpoint, and transactions in every state
  a.name = `Tenant A ${tag}`;
  a.partner = await api.createPartner({ name: a.name });
  a.shared = `shared-${tag}`;
  a.only = `a-only-${tag}`;
  a.legalNames = [`A Shared Legal ${tag}`, `A Only Legal ${tag}`];
  const clients = [
    await must('client', api.signed(a.partner, '/clients', { client_id: a.shared, legal_name: a.legalNames[0] }), 201),
    await must('client', api.signed(a.partner, '/clients', { client_id: a.only, legal_name: a.legalNames[1] }), 201),
  ] as Array<{ id: string }>;
  a.clientRecordIds = clients.map((client) => client.id);
  a.endpointId = (await must('endpoint', api.admin('POST', `/admin/partners/${a.partner.partnerId}/webhook-endpoints`, { name: 'A', url: 'http://127.0.0.1:9/a', events: ['transaction_succeeded'] }), 201) as { id: string }).id;
  a.metaMarker = `a-meta-${tag}`;
  const body = checkoutBody(a.partner.partnerId, a.shared, { meta: { marker: a.metaMarker } });
  const rawBody = JSON.stringify(body);
  const key = `checkout-${body.partner_reference}`;
  const checkout = (await must('checkout', api.signed(a.partner, '/transactions/checkout-intent', undefined, { rawBody, idempotencyKey: key }), 201)) as Record<string, string>;
  a.checkout = { svcTxId: checkout.svc_tx_id!, intentId: checkout.processor_payment_intent_id!, clientSecret: checkout.client_secret!, reference: body.partner_reference, rawBody, key };
  a.initialized = ((await must('initialize', api.signed(a.partner, '/transactions/initialize', { partner_id: a.partner.partnerId, client_id: a.only, amount: 12.34, currency: 'USD', partner_reference: `init-${tag}` }), 201)) as { svc_tx_id: string }).svc_tx_id;
  const payee = { partnerId: a.partner.partnerId, clientId: a.only };
  const settled = [await transactionIn(api, payee, { amountMinor: 4_321, currency: 'EUR' }), await transactionIn(api, payee, { amountMinor: 1_234, currency: 'GBP' })];
  a.settled = settled.map((tx) => tx.svcTxId);
  const run = (await must('run', api.request('POST', '/settlements/run', { headers: { 'x-api-key': a.partner.apiKey } }), 200)) as { batches: Array<{ id: string }> };
  a.batches = run.batches.map((batch) => batch.id);
  a.waiting = (await transactionIn(api, payee, { amountMinor: 999, currency: 'EUR' })).svcTxId;
  // A second waiting currency: A's balances have two pages at limit=1, so A has a balances cursor to try.
  a.waitingOther = (await transactionIn(api, payee, { amountMinor: 777, currency: 'GBP' })).svcTxId;
  const refunded = await transactionIn(api, payee, { amountMinor: 555, currency: 'EUR' });
  await refund(api, refunded);
  const deliveries = (await must('deliveries', api.admin('GET', `/admin/partners/${a.partner.partnerId}/webhook-deliveries`), 200)) as { items: Array<{ id: string }> };
  a.deliveryId = deliveries.items[0]!.id;
  const cursor = async (path: string) => ((await must(path, api.read(a.partner, path), 200)) as { next_cursor: string }).next_cursor;
  a.cursors = {
    transactions: await cursor('/transactions?limit=1'),
    clients: await cursor('/clients?limit=1'),
    settlements: await cursor('/settlements?limit=1'),
    balances: await cursor('/balances?limit=1'),
  };
  // B: its own credentials; a client with A's shared client_id (a client_id is the partner's own namespace)
  b.partner = await api.createPartner();
  b.shared = (await must('client', api.signed(b.partner, '/clients', { client_id: a.shared, legal_name: 'B Shared Legal' }), 201) as { client_id: string }).client_id;
  b.checkout = ((await must('checkout', api.signed(b.partner, '/transactions/checkout-intent', checkoutBody(b.partner.partnerId, b.shared)), 201)) as { svc_tx_id: string }).svc_tx_id;
  // Initialized in the amount and currency of A's intent: only the intent's owner check can refuse attaching it.
  const claims = { role: 'admin', sub: 'partner-b' };
  const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  b.forged = {
    hs256: await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(config.ADMIN_JWT_ISSUER ?? '')
      .setAudience(config.ADMIN_JWT_AUDIENCE ?? '')
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(b.partner.hmacSecret)),
    none: `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url({ ...claims, iss: config.ADMIN_JWT_ISSUER, aud: config.ADMIN_JWT_AUDIENCE, iat: now, exp: now + 3600 })}.`,
  };
  b.initialized = ((await must('initialize', api.signed(b.partner, '/transactions/initialize', { partner_id: b.partner.partnerId, client_id: b.shared, amount: 49.99, currency: 'EUR', partner_reference: `b-init-${tag}` }), 201)) as { svc_tx_id: string }).svc_tx_id;
}, TEST_TIMEOUT_MS);

afterAll(() => api.close());

/** Everything of A's that B must never get back (unless B sent it in that very request). */
const markers = (): string[] => [
  a.partner.partnerId,
  a.name,
  a.only,
  ...a.legalNames,
  ...a.clientRecordIds,
  a.checkout.svcTxId,
  a.checkout.intentId,
  a.checkout.clientSecret,
  a.checkout.reference,
  a.initialized,
  ...a.settled,
  a.waiting,
  a.waitingOther,
  ...a.batches,
  a.partner.keyId,
  a.endpointId,
  a.deliveryId,
  a.metaMarker,
];

const readHeaders = () => ({ 'x-api-key': b.partner.apiKey });
const signedHeaders = (body: string, idempotencyKey: string = randomUUID()) => ({
  'content-type': 'application/json',
  'x-api-key': b.partner.apiKey,
  'x-svc-hmac': sign(b.partner.hmacSecret, body),
  'idempotency-key': idempotencyKey,
});

const refused = (status: number, code: string): Expect => ({ kind: 'refused', status, code });
const SCOPE = refused(403, 'API_KEY_SCOPE_FORBIDDEN');
const CURSOR = refused(400, 'VALIDATION_ERROR');
const OWN: Expect = { kind: 'own' };

/** Tailored probes, by route name: each reaches the scope check it is about (valid bodies, B's own signature). */
function tailored(): Record<string, Array<{ label: string; path: string; body?: unknown; rawBody?: string; idempotencyKey?: string; expect: Expect }>> {
  const payment = (partnerId: string, clientId: string) => checkoutBody(partnerId, clientId);
  const init = (partnerId: string, clientId: string) => ({ partner_id: partnerId, client_id: clientId, amount: 10, currency: 'USD', partner_reference: `x-${randomUUID()}` });
  return {
    'transactions-get': [
      { label: 'A`s checkout', path: `/transactions/${a.checkout.svcTxId}`, expect: refused(404, 'TX_NOT_FOUND') },
      { label: 'A`s initialized', path: `/transactions/${a.initialized}`, expect: refused(404, 'TX_NOT_FOUND') },
      { label: 'A`s settled, with partner_id of A', path: `/transactions/${a.settled[0]}?partner_id=${a.partner.partnerId}`, expect: SCOPE },
    ],
    'transactions-list': [
      { label: 'partner_id of A', path: `/transactions?partner_id=${a.partner.partnerId}`, expect: SCOPE },
      { label: 'A-only client_id', path: `/transactions?client_id=${a.only}`, expect: OWN },
      { label: 'shared client_id', path: `/transactions?client_id=${a.shared}`, expect: OWN },
      { label: 'A`s partner_reference', path: `/transactions?partner_reference=${a.checkout.reference}`, expect: OWN },
      { label: 'succeeded', path: '/transactions?status=succeeded&limit=200', expect: OWN },
      { label: 'A`s cursor', path: `/transactions?limit=1&cursor=${encodeURIComponent(a.cursors.transactions)}`, expect: CURSOR },
    ],
    'clients-list': [
      { label: 'partner_id of A', path: `/clients?partner_id=${a.partner.partnerId}`, expect: SCOPE },
      { label: 'own', path: '/clients?limit=200', expect: OWN },
      { label: 'A`s cursor', path: `/clients?limit=1&cursor=${encodeURIComponent(a.cursors.clients)}`, expect: CURSOR },
    ],
    'settlements-list': [
      { label: 'partner_id of A', path: `/settlements?partner_id=${a.partner.partnerId}`, expect: SCOPE },
      { label: 'A-only client_id', path: `/settlements?client_id=${a.only}`, expect: OWN },
      { label: 'A`s cursor', path: `/settlements?limit=1&cursor=${encodeURIComponent(a.cursors.settlements)}`, expect: CURSOR },
    ],
    'balances-list': [
      { label: 'partner_id of A', path: `/balances?partner_id=${a.partner.partnerId}`, expect: SCOPE },
      { label: 'A-only client_id (A has money waiting there)', path: `/balances?client_id=${a.only}`, expect: OWN },
      { label: 'own', path: '/balances?limit=200', expect: OWN },
      { label: 'A`s cursor', path: `/balances?limit=1&cursor=${encodeURIComponent(a.cursors.balances)}`, expect: CURSOR },
    ],
    'settlements-report': a.batches.map((id) => ({ label: 'A`s batch', path: `/settlements/${id}/report.csv`, expect: refused(404, 'BATCH_NOT_FOUND') })),
    'settlements-run': [
      { label: 'partner_id of A', path: `/settlements/run?partner_id=${a.partner.partnerId}`, expect: SCOPE },
      { label: 'A-only client_id (A has a waiting payment there)', path: `/settlements/run?client_id=${a.only}`, expect: OWN },
      { label: 'shared client_id', path: `/settlements/run?client_id=${a.shared}`, expect: OWN },
    ],
    'settlements-pay': a.batches.map((id) => ({ label: 'A`s batch', path: '/settlements/pay', body: { settlement_batch_id: id }, expect: refused(404, 'BATCH_NOT_FOUND') })),
    'clients-create': [{ label: 'partner_id of A', path: '/clients', body: { partner_id: a.partner.partnerId, client_id: `x-${randomUUID()}`, legal_name: 'Stolen Ltd' }, expect: SCOPE }],
    'transactions-checkout-intent': [
      { label: 'partner_id of A', path: '/transactions/checkout-intent', body: payment(a.partner.partnerId, a.shared), expect: SCOPE },
      { label: 'A-only client under B', path: '/transactions/checkout-intent', body: payment(b.partner.partnerId, a.only), expect: refused(404, 'CLIENT_NOT_FOUND') },
      // A's exact request (bytes and idempotency key) re-signed by B: B's own key space, so never A's stored 201.
      { label: 'A`s request replayed', path: '/transactions/checkout-intent', rawBody: a.checkout.rawBody, idempotencyKey: a.checkout.key, expect: SCOPE },
    ],
    'transactions-checkout-intent-v2': [
      { label: 'partner_id of A', path: '/transactions/checkout-intent-v2', body: payment(a.partner.partnerId, a.shared), expect: SCOPE },
      { label: 'A-only client under B', path: '/transactions/checkout-intent-v2', body: payment(b.partner.partnerId, a.only), expect: refused(404, 'CLIENT_NOT_FOUND') },
    ],
    'transactions-initialize': [
      { label: 'partner_id of A', path: '/transactions/initialize', body: init(a.partner.partnerId, a.shared), expect: SCOPE },
      { label: 'A-only client under B', path: '/transactions/initialize', body: init(b.partner.partnerId, a.only), expect: refused(404, 'CLIENT_NOT_FOUND') },
    ],
    'transactions-attach-intent': [
      { label: 'A`s transaction', path: '/transactions/attach-intent', body: { svc_tx_id: a.initialized, processor_payment_intent_id: a.checkout.intentId }, expect: refused(404, 'TX_NOT_FOUND') },
      { label: 'an unknown intent', path: '/transactions/attach-intent', body: { svc_tx_id: b.initialized, processor_payment_intent_id: 'pi_NoSuchIntentAnywhere000001' }, expect: refused(400, 'VALIDATION_ERROR') },
      // docs/checkout.md: another partner's intent is refused exactly as one the processor does not know.
      { label: 'A`s intent', path: '/transactions/attach-intent', body: { svc_tx_id: b.initialized, processor_payment_intent_id: a.checkout.intentId }, expect: { kind: 'same-as', label: 'an unknown intent' } },
    ],
  };
}

/** A's id for a path parameter of `route` (unknown names get A's checkout `svc_tx_id`). */
function aIdFor(param: string, route: RouteDefinition): string {
  if (param === 'svc_tx_id') return a.checkout.svcTxId;
  if (param === 'partner_id') return a.partner.partnerId;
  if (param === 'key_id') return a.partner.keyId;
  if (param === 'client_id') return a.only;
  if (param === 'settlement_batch_id') return a.batches[0] as string;
  if (param === 'id') {
    if (route.path.includes('/settlements/')) return a.batches[0] as string;
    if (route.path.includes('/webhook-endpoints/')) return a.endpointId;
    if (route.path.includes('/webhook-deliveries/')) return a.deliveryId;
  }
  return a.checkout.svcTxId;
}

const withAIds = (route: RouteDefinition) => route.path.slice(API_PREFIX.length).replace(/\{([A-Za-z0-9_]+)\}/g, (_, param: string) => aIdFor(param, route));

/** Every probe of the matrix, for every route of the table. */
function probes(): { probes: Probe[]; skipped: string[]; untailored: string[] } {
  const all: Probe[] = [];
  const skipped: string[] = [];
  const untailored: string[] = [];
  const cases = tailored();
  for (const route of routes) {
    const access = accessOf(route);
    const key = routeKey(route);
    if (access === 'public') {
      skipped.push(key);
      continue;
    }
    if (access === 'admin') {
      const body = JSON.stringify({ status: 'suspended', scope: 'partner', name: 'pwn', url: 'http://127.0.0.1:9/pwn', events: ['transaction_succeeded'], service_fee_percentage: 0 });
      const sends = route.method === 'POST' || route.method === 'PATCH';
      const variants: Array<[string, Record<string, string>]> = [
        ['x-api-key', { 'x-api-key': b.partner.apiKey }],
        ['bearer API key', { authorization: `Bearer ${b.partner.apiKey}` }],
        ['bearer HMAC secret, signed', { ...signedHeaders(body), authorization: `Bearer ${b.partner.hmacSecret}` }],
        ['admin token forged with its HMAC secret (HS256)', { authorization: `Bearer ${b.forged.hs256}` }],
        ['unsigned admin token (alg none)', { authorization: `Bearer ${b.forged.none}` }],
      ];
      for (const [label, headers] of variants) {
        all.push({ label: `B's ${label}`, route, path: withAIds(route), headers, ...(sends ? { body } : {}), expect: refused(401, 'ADMIN_TOKEN_INVALID') });
      }
      continue;
    }
    // A partner route: its tailored probes (a HEAD route gets its GET route's), then the generic one.
    const own = cases[route.name] ?? [];
    if (own.length === 0) untailored.push(key);
    for (const probe of own) {
      const rawBody = probe.rawBody ?? (probe.body === undefined ? undefined : JSON.stringify(probe.body));
      const headers = access === 'partner-mutation' ? signedHeaders(rawBody ?? '', probe.idempotencyKey) : rawBody === undefined ? readHeaders() : { ...readHeaders(), 'content-type': 'application/json' };
      all.push({ label: probe.label, route, path: probe.path, headers, ...(rawBody === undefined ? {} : { body: rawBody }), expect: probe.expect });
    }
    const query = `${withAIds(route).includes('?') ? '&' : '?'}partner_id=${a.partner.partnerId}&client_id=${a.only}`;
    const genericBody =
      route.method === 'POST'
        ? JSON.stringify({
            partner_id: a.partner.partnerId,
            client_id: a.only,
            svc_tx_id: a.checkout.svcTxId,
            settlement_batch_id: a.batches[0],
            processor_payment_intent_id: a.checkout.intentId,
          })
        : undefined;
    all.push({
      label: 'generic: A`s ids everywhere',
      route,
      path: `${withAIds(route)}${query}`,
      headers: access === 'partner-mutation' ? signedHeaders(genericBody ?? '') : { ...readHeaders(), ...(genericBody === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(genericBody === undefined ? {} : { body: genericBody }),
      expect: { kind: 'any-refusal' },
    });
  }
  return { probes: all, skipped, untailored };
}

describe('partner B against every route, with partner A`s identifiers', () => {
  it('every partner route has tailored probes (a new route: add its cases to `tailored()`), and every admin route is probed', () => {
    const { probes: all, untailored, skipped } = probes();

    expect(untailored).toEqual([]);
    const probed = new Set(all.map((probe) => routeKey(probe.route)));
    expect(routes.map(routeKey).filter((key) => !probed.has(key) && !skipped.includes(key))).toEqual([]);
    // Only routes that are not partner-scoped are skipped: health, the public branding packet, the processor's webhook,
    // and the API's documentation (the same for everyone).
    expect(skipped.sort()).toEqual(
      routes
        .filter((route) => ['health', 'branding-packet', 'processor-webhook', 'openapi-document', 'api-docs', 'api-docs-script'].includes(route.name))
        .map(routeKey)
        .sort(),
    );
  });

  it('leaks nothing: every probe refused as documented or answered with B`s own data, and A`s world is unchanged', async () => {
    // Arrange
    const { probes: all } = probes();

    // Act: the probes, a few at a time; those other probes refer to go first
    const answers = new Map<string, Answer>();
    const results: Array<{ probe: Probe; answer: Answer }> = [];
    const ordered = [...all.filter((probe) => probe.expect.kind !== 'same-as'), ...all.filter((probe) => probe.expect.kind === 'same-as')];
    for (let i = 0; i < ordered.length; i += 8) {
      const batch = ordered.slice(i, i + 8);
      const batchAnswers = await Promise.all(batch.map((probe) => send(api.baseUrl, probe)));
      batch.forEach((probe, j) => {
        const answer = batchAnswers[j] as Answer;
        answers.set(`${probe.route.method} ${probe.label}`, answer);
        results.push({ probe, answer });
      });
    }

    // Assert: no leak
    const leaks = results.flatMap(({ probe, answer }) => {
      // Every answer keeps the route's documented contract too (a documented status and body, a documented code).
      const why = answer.contractViolation ?? leakOf(probe, answer, { markers: markers(), ownPartnerId: b.partner.partnerId, answers });
      return why === undefined ? [] : [`${routeKey(probe.route)} [${probe.label}] ${probe.path} -> ${answer.status} ${answer.text.slice(0, 300)}: ${why}`];
    });
    expect(leaks).toEqual([]);
    console.log(`tenant isolation: ${results.length} probes over ${new Set(results.map((r) => routeKey(r.probe.route))).size} routes, ${leaks.length} leaks`);

    // Assert: A's world, read back by A, as it was
    const readA = async (path: string) => (await api.read(a.partner, path)).body;
    expect(await readA(`/transactions/${a.checkout.svcTxId}`)).toMatchObject({ status: 'pending', processorPaymentIntentId: a.checkout.intentId, partnerId: a.partner.partnerId });
    expect(await readA(`/transactions/${a.initialized}`)).toMatchObject({ status: 'initialized', processorPaymentIntentId: null });
    for (const id of a.settled) expect(await readA(`/transactions/${id}`)).toMatchObject({ status: 'succeeded', settlementStatus: 'queued' });
    expect(await readA(`/transactions/${a.waiting}`)).toMatchObject({ status: 'succeeded', settlementStatus: 'unsettled' });
    expect(((await readA('/settlements')).items as Array<{ id: string; status: string }>).map((batch) => [batch.id, batch.status]).sort()).toEqual(a.batches.map((id) => [id, 'pending']).sort());
    for (const id of a.batches) expect([...(await railTransfers('a', id)), ...(await railTransfers('b', id))]).toEqual([]);
    expect(((await readA('/clients')).items as Array<{ client_id: string }>).map((client) => client.client_id).sort()).toEqual([a.only, a.shared].sort());
    const partner = await api.admin('GET', `/admin/partners/${a.partner.partnerId}`);
    expect(partner.body).toMatchObject({ name: a.name, status: 'active', kyc_status: 'approved' });
    expect((await api.admin('GET', `/admin/partners/${a.partner.partnerId}/webhook-endpoints`)).body.items.map((endpoint: { id: string }) => endpoint.id)).toEqual([a.endpointId]);
    // ... and B's transaction did not get A's intent
    expect((await api.read(b.partner, `/transactions/${b.initialized}`)).body).toMatchObject({ status: 'initialized', processorPaymentIntentId: null });
  }, TEST_TIMEOUT_MS);
});
