/**
 * decisions.md §3: no caller input ever yields a 500. Every route of the route table gets malformed bodies,
 * queries and path parameters, anonymously and with valid partner, platform and admin credentials (signed, so
 * the input reaches validation and the handler); every answer must be a 4xx (or a success) in the spec's body.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { routes } from '../../../lib/routes';
import { sign, TestApi, type PartnerCredentials } from '../../support/api';

let api: TestApi;
let partner: PartnerCredentials;
let platform: Omit<PartnerCredentials, 'partnerId'>;
beforeAll(async () => {
  api = await TestApi.start();
  partner = await api.createPartner();
  platform = await api.createPlatformKey();
});
afterAll(() => api.close());

const long = 'x'.repeat(5000);
const bodies = ['', 'null', '[]', '"text"', '{"a":', '{}', '{"partner_id":{},"client_id":[],"amount":"1","currency":7}', JSON.stringify({ client_id: long, legal_name: long, amount: 1e308, currency: long, meta: { deep: { deeper: [long] } } })];
const queries = ['', '?created_to=2026-01-01', '?created_from=2026-02-01&created_to=2026-01-01', '?limit=-1', '?limit=1e400', '?cursor=%ZZ', `?cursor=${'A'.repeat(3000)}`, '?status=__proto__&client_id=%00', '?created_from=2026-13-45&created_to=x', `?partner_id=${long}`];
const pathValues = ['%ZZ', 'x'.repeat(300), '..', 'svc_tx_%00', encodeURIComponent('a#b c')];

type Caller = 'anonymous' | 'partner' | 'platform' | 'admin';

function headersFor(caller: Caller, rawBody: string): Record<string, string> {
  const base = { 'content-type': 'application/json', 'idempotency-key': randomUUID() };
  if (caller === 'anonymous') return base;
  if (caller === 'admin') return { ...base, authorization: `Bearer ${api.adminToken}` };
  const credentials = caller === 'partner' ? partner : platform;
  return { ...base, 'x-api-key': credentials.apiKey, 'x-svc-hmac': sign(credentials.hmacSecret, rawBody) };
}

describe('no caller input yields a 500', () => {
  const callers: Caller[] = ['anonymous', 'partner', 'platform', 'admin'];

  it.each(routes.map((route) => [`${route.method} ${route.path}`, route] as const))('%s', async (_name, route) => {
    const failures: string[] = [];
    const paths = route.path.includes('{') ? pathValues.map((value) => route.path.replace(/\{[^}]+\}/g, value)) : [route.path];
    for (const caller of callers) {
      for (const path of paths) {
        for (const query of route.method === 'GET' || route.method === 'HEAD' ? queries : ['']) {
          for (const body of route.method === 'POST' || route.method === 'PATCH' ? bodies : ['']) {
            const response = await api.request(route.method, `${path.replace('/api/v1', '')}${query}`, {
              headers: headersFor(caller, body),
              ...(body === '' ? {} : { body }),
            });
            // A HEAD answer has no body: its status alone must not be a server error.
            const wellFormed = response.status < 500 && (response.status < 400 || route.method === 'HEAD' || typeof response.body?.code === 'string');
            if (!wellFormed) failures.push(`${caller} ${route.method} ${path}${query} ${body.slice(0, 40)} -> ${response.status} ${JSON.stringify(response.body)}`);
          }
        }
      }
    }
    expect(failures).toEqual([]);
  }, 60_000);
});
