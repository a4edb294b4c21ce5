/**
 * The sandbox checkout's partner bootstrap (infra/local/sandbox/checkout/partner.ts) against a service that answers
 * "try again" now and then: a front in the test, before the local HTTP API, answers chosen calls itself (503, 429,
 * 502, 409 IDEMPOTENCY_KEY_IN_USE) or passes them on and loses the answer, and records every try. The bootstrap
 * must retry as a partner's client does, and never leave a partner made and forgotten.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keyStillWorks, partnerKeeper, SANDBOX_MERCHANT, sandboxPartner } from '../../../infra/local/sandbox/checkout/partner';
import { TestApi } from '../../support/api';

jest.setTimeout(30_000);

interface Fault {
  method: string;
  path: RegExp;
  /** How many tries it meets, from the first. */
  times: number;
  /** The front's own answer; `lost`: the service's answer (it acted) replaced by a 502. */
  answer: { status: number; code: string; retryAfter?: string } | 'lost';
}

interface Try {
  method: string;
  path: string;
  at: number;
  body: string;
  idempotencyKey: string | undefined;
  signature: string | undefined;
}

let api: TestApi;
let front: Server;
let frontOrigin: string;
let faults: Fault[] = [];
const tries: Try[] = [];
const dirs: string[] = [];

const PASSED_ON = ['authorization', 'content-type', 'x-api-key', 'x-svc-hmac', 'idempotency-key'];

beforeAll(async () => {
  api = await TestApi.start();
  const apiOrigin = new URL(api.baseUrl).origin;
  front = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', async () => {
      const path = new URL(request.url ?? '/', 'http://front').pathname;
      tries.push({ method: request.method ?? '', path, at: Date.now(), body, idempotencyKey: request.headers['idempotency-key'] as string | undefined, signature: request.headers['x-svc-hmac'] as string | undefined });
      const fault = faults.find((candidate) => candidate.method === request.method && candidate.path.test(path) && candidate.times > 0);
      if (fault !== undefined) fault.times--;
      if (fault !== undefined && fault.answer !== 'lost') {
        const { status, code, retryAfter } = fault.answer;
        response.writeHead(status, { 'content-type': 'application/json', ...(retryAfter === undefined ? {} : { 'retry-after': retryAfter }) }).end(JSON.stringify({ error: 'try again', code }));
        return;
      }
      const headers = Object.fromEntries(
        PASSED_ON.flatMap((name): Array<[string, string]> => {
          const value = request.headers[name];
          return typeof value === 'string' ? [[name, value]] : [];
        }),
      );
      const answer = await fetch(`${apiOrigin}${request.url}`, { method: request.method, headers, ...(body === '' ? {} : { body }) });
      const text = await answer.text();
      if (fault !== undefined) response.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'Bad gateway', code: 'BAD_GATEWAY' }));
      else response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(text);
    });
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  frontOrigin = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => front.close(resolve));
  await api?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  faults = [];
  tries.length = 0;
});

function newStateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-partner-state-'));
  dirs.push(dir);
  return dir;
}

const bootstrap = (stateDir: string) => sandboxPartner({ apiOrigin: frontOrigin, basePath: '/sandbox', adminToken: async () => api.adminToken, keeper: partnerKeeper(stateDir) });
const triesOf = (method: string, path: RegExp) => tries.filter((one) => one.method === method && path.test(one.path));
const kept = (stateDir: string) => JSON.parse(readFileSync(join(stateDir, 'state.json'), 'utf8')) as Record<string, unknown>;

const PARTNERS = /^\/api\/v1\/admin\/partners$/;
const KEYS = /^\/api\/v1\/admin\/partners\/[^/]+\/api-keys$/;
const ENDPOINTS = /^\/api\/v1\/admin\/partners\/[^/]+\/webhook-endpoints$/;
const CLIENTS = /^\/api\/v1\/clients$/;

describe('the sandbox partner bootstrap', () => {
  it('sends each call the service asks to have again (503, 429, 502, 409 IN_USE) again, after its Retry-After, with the same key and bytes, and makes one partner', async () => {
    // Arrange
    faults = [
      { method: 'POST', path: PARTNERS, times: 1, answer: { status: 503, code: 'SERVICE_UNAVAILABLE', retryAfter: '1' } },
      { method: 'POST', path: KEYS, times: 1, answer: { status: 429, code: 'RATE_LIMITED', retryAfter: '0' } },
      { method: 'POST', path: ENDPOINTS, times: 1, answer: { status: 502, code: 'BAD_GATEWAY' } },
      { method: 'GET', path: ENDPOINTS, times: 1, answer: { status: 503, code: 'REQUEST_TIMED_OUT', retryAfter: '0' } },
      { method: 'POST', path: CLIENTS, times: 1, answer: { status: 409, code: 'IDEMPOTENCY_KEY_IN_USE', retryAfter: '0' } },
    ];

    // Act
    const credentials = await bootstrap(newStateDir());

    // Assert
    const [first, second] = triesOf('POST', PARTNERS);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(990);
    expect([PARTNERS, KEYS, ENDPOINTS, CLIENTS].map((path) => triesOf('POST', path).length)).toEqual([2, 2, 2, 2]);
    const merchantTries = triesOf('POST', CLIENTS);
    expect(new Set(merchantTries.map(({ body, idempotencyKey, signature }) => JSON.stringify([body, idempotencyKey, signature]))).size).toBe(1);
    expect(merchantTries[0]?.idempotencyKey).toBe(`client-${SANDBOX_MERCHANT}`);
    expect(await keyStillWorks(credentials, new URL(api.baseUrl).origin)).toBe(true);
    const merchants = await api.request('GET', `/clients?limit=10`, { headers: { 'x-api-key': credentials.api_key } });
    expect((merchants.body.items as { client_id: string }[]).map((client) => client.client_id)).toEqual([SANDBOX_MERCHANT]);
  });

  it('gives up after four tries, keeping the partner unfinished; the next request finishes that partner instead of making another', async () => {
    // Arrange: the merchant's call answers 503 four times, the bound
    const stateDir = newStateDir();
    faults = [{ method: 'POST', path: CLIENTS, times: 4, answer: { status: 503, code: 'SERVICE_UNAVAILABLE', retryAfter: '0' } }];

    // Act
    const failed = await bootstrap(stateDir).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    const unfinished = kept(stateDir);
    const credentials = await bootstrap(stateDir);

    // Assert
    expect(failed?.message).toMatch(/^POST \/clients answered 503/);
    expect(unfinished).toMatchObject({ partner_id: credentials.partner_id, incomplete: true });
    expect(triesOf('POST', PARTNERS)).toHaveLength(1);
    expect(triesOf('POST', CLIENTS)).toHaveLength(5);
    expect(kept(stateDir)).toEqual(expect.not.objectContaining({ incomplete: true }));
    expect(kept(stateDir)).toMatchObject(credentials);
    expect(await keyStillWorks(credentials, new URL(api.baseUrl).origin)).toBe(true);
  });

  it('removes a webhook endpoint made by a try whose answer was lost: the partner keeps only the one whose secret is kept', async () => {
    const stateDir = newStateDir();
    faults = [{ method: 'POST', path: ENDPOINTS, times: 1, answer: 'lost' }];

    const credentials = await bootstrap(stateDir);
    const endpoints = await api.admin('GET', `/admin/partners/${credentials.partner_id}/webhook-endpoints`);

    expect(triesOf('POST', ENDPOINTS)).toHaveLength(2);
    expect((endpoints.body.items as { id: string }[]).map((endpoint) => endpoint.id)).toEqual([kept(stateDir).webhook_endpoint_id]);
  });
});
