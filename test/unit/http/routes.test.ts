import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { handler as notFound } from '../../../functions/not-found';
import { PROJECT_ROOT } from '../../../infra/build/bundling';
import { matchPath, resolveRoute, routes } from '../../../lib/routes';
import { httpEvent, lambdaContext } from '../../support/events';

describe('the route table', () => {
  it('gives every route a unique method and path, and one access declaration per function', () => {
    const keys = routes.map((route) => `${route.method} ${route.path}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const route of routes) {
      expect(route.path.startsWith('/api/v1/')).toBe(true);
      const sameFunction = routes.filter((other) => other.name === route.name);
      for (const other of sameFunction) expect(other.access).toEqual(route.access);
    }
  });

  it('resolves a known route and reports the allowed methods of a known path', () => {
    const found = resolveRoute('get', '/api/v1/health');
    const wrongMethod = resolveRoute('POST', '/api/v1/health');
    const unknown = resolveRoute('GET', '/api/v1/nothing-here');

    expect('route' in found && found.route.name).toBe('health');
    expect(wrongMethod).toEqual({ allowed: ['GET', 'HEAD'] });
    expect(unknown).toEqual({ allowed: [] });
  });

  it('serves HEAD wherever it serves GET, from the same function with the same access (API Gateway maps neither)', () => {
    const gets = routes.filter((route) => route.method === 'GET');
    const heads = routes.filter((route) => route.method === 'HEAD');

    expect(gets.length).toBeGreaterThan(0);
    expect(heads.map(({ name, path, access }) => ({ name, path, access }))).toEqual(gets.map(({ name, path, access }) => ({ name, path, access })));
    const resolved = resolveRoute('HEAD', '/api/v1/transactions/svc_tx_1');
    expect('route' in resolved && { name: resolved.route.name, params: resolved.pathParameters }).toEqual({
      name: 'transactions-get',
      params: { svc_tx_id: 'svc_tx_1' },
    });
  });

  it('decodes path parameters, and passes a malformed escape through instead of failing', () => {
    const decoded = resolveRoute('GET', '/api/v1/transactions/svc%5Ftx%5F1');
    const malformed = resolveRoute('GET', '/api/v1/transactions/%ZZ');

    expect('route' in decoded && decoded.pathParameters).toEqual({ svc_tx_id: 'svc_tx_1' });
    expect('route' in malformed && malformed.pathParameters).toEqual({ svc_tx_id: '%ZZ' });
  });

  it('lets no read route (GET, HEAD, OPTIONS) write the table or seal a secret, and only a DELETE route delete an item', () => {
    const reads = routes.filter((route) => ['GET', 'HEAD', 'OPTIONS'].includes(route.method));
    const writing = reads.filter((route) => !['read', 'describe', undefined].includes(route.access.table) || route.access.kms?.includes('encrypt'));
    const deleting = routes.filter((route) => route.access.table === 'readWrite' && route.method !== 'DELETE');

    expect(reads.length).toBeGreaterThan(0);
    expect(writing.map((route) => `${route.method} ${route.path}`)).toEqual([]);
    expect(deleting.map((route) => `${route.method} ${route.path}`)).toEqual([]);
  });

  it('does not match a path that only shares a prefix with a route', () => {
    expect(matchPath('/api/v1/health/extra')).toEqual([]);
    expect(matchPath('/api/v1/healthz')).toEqual([]);
  });
});

describe("KMS in the route table (the key that seals API keys' HMAC secrets and webhook endpoint secrets)", () => {
  /** The routes that create a secret, sealed before it is stored: an API key's HMAC secret, a webhook endpoint's. */
  const SEALING = ['admin-api-keys-create', 'admin-partner-api-keys-create', 'admin-webhook-endpoints-create'];
  /**
   * The partner mutations: the chain's HMAC step opens the signing key's sealed secret on every one (`hmacSignature`
   * in lib/http/access.ts). No other route opens a secret: webhook endpoint secrets are opened only by the delivery
   * consumer, which is no HTTP route, and no admin route ever shows or uses one.
   */
  const OPENING = ['clients-create', 'transactions-attach-intent', 'transactions-checkout-intent', 'transactions-checkout-intent-v2', 'transactions-initialize'];

  const routesWith = (grant: 'encrypt' | 'decrypt') => [...new Set(routes.filter((route) => route.access.kms?.includes(grant)).map((route) => route.name))].sort();
  /** The functions built on the chain's partner-mutation access (API key, then HMAC over the body): those that open a secret. */
  const partnerMutationFunctions = () =>
    readdirSync(join(PROJECT_ROOT, 'functions'))
      .filter((file) => file.endsWith('.ts') && /access:\s*'partner-mutation'/.test(readFileSync(join(PROJECT_ROOT, 'functions', file), 'utf8')))
      .map((file) => file.slice(0, -'.ts'.length))
      .sort();

  it('lets only the routes that create secrets encrypt, and none of them decrypt', () => {
    expect(routesWith('encrypt')).toEqual(SEALING);
    expect(SEALING.filter((name) => routesWith('decrypt').includes(name))).toEqual([]);
  });

  it('lets exactly the partner mutations decrypt, the routes whose chain checks an HMAC signature', () => {
    expect(routesWith('decrypt')).toEqual(OPENING);
    expect(partnerMutationFunctions()).toEqual(OPENING);
  });

  it('gives no read route, and no admin webhook route, any KMS access', () => {
    const reads = routes.filter((route) => ['GET', 'HEAD', 'OPTIONS'].includes(route.method));
    const webhookAdmin = routes.filter((route) => route.name.startsWith('admin-webhook-'));

    expect(reads.length).toBeGreaterThan(0);
    expect(webhookAdmin.length).toBeGreaterThan(0);
    expect(reads.filter((route) => (route.access.kms ?? []).length > 0).map((route) => `${route.method} ${route.path}`)).toEqual([]);
    expect(webhookAdmin.filter((route) => route.access.kms?.includes('decrypt')).map((route) => `${route.method} ${route.path}`)).toEqual([]);
  });
});

describe('the $default function', () => {
  it('answers an unknown path with 404 NOT_FOUND in JSON', async () => {
    const response = await notFound(httpEvent({ method: 'GET', path: '/api/v1/unknown' }), lambdaContext());

    expect(response.statusCode).toBe(404);
    expect(response.headers?.['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(response.body ?? '')).toEqual({ error: 'No route matches this path', code: 'NOT_FOUND' });
  });

  it('answers a known path under the wrong method with 405 and Allow', async () => {
    const response = await notFound(httpEvent({ method: 'DELETE', path: '/api/v1/health' }), lambdaContext());

    expect(response.statusCode).toBe(405);
    expect(response.headers?.Allow).toBe('GET, HEAD');
    expect(JSON.parse(response.body ?? '').code).toBe('METHOD_NOT_ALLOWED');
  });
});
