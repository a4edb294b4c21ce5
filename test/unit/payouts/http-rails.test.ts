/**
 * The HTTP rails adapter against a scripted rail (an injected fetch): the request it sends (docs/rails.md) and how
 * each answer maps to the port's outcomes. The adapter against the sandbox rails over real HTTP is
 * test/integration/sandboxes/rails.test.ts.
 */
import { describe, expect, it } from '@jest/globals';
import { runWithDeadline } from '../../../lib/deadline';
import { currencyCode } from '../../../lib/domain/money';
import { createHttpRails } from '../../../lib/payouts/http-rails';
import { PayoutOutcomeUnknown, type PayoutRequest } from '../../../lib/use-cases/ports/payouts';
import { railKeysFromEnvironment, type RailKeys } from '../../../lib/payouts/rail-keys';

const KEYS: RailKeys = { railA: 'ra_secret_key_0123456789', railB: 'rb_secret_key_0123456789' };

interface Sent {
  url: string;
  method: string | undefined;
  headers: Record<string, string>;
  body: unknown;
  signal: AbortSignal | undefined;
}

/** A fetch that records each request and answers with `answer` (a Response, or a thrown error). */
function scriptedFetch(answer: (sent: Sent) => Response | Promise<Response>) {
  const sent: Sent[] = [];
  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request: Sent = {
      url: String(input),
      method: init?.method,
      headers: Object.fromEntries(new Headers(init?.headers).entries()),
      body: init?.body === undefined ? undefined : JSON.parse(String(init.body)),
      signal: init?.signal ?? undefined,
    };
    sent.push(request);
    return answer(request);
  };
  return { fetch: fetch as typeof globalThis.fetch, sent };
}

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

type Bases = { railABase: string | undefined; railBBase: string | undefined };

const rails = (fetch: typeof globalThis.fetch, keys: RailKeys = KEYS, bases: Bases = { railABase: 'https://rail-a.example/v1/', railBBase: 'https://rail-b.example' }) =>
  createHttpRails({ ...bases, loadKeys: railKeysFromEnvironment(keys), fetch });

const payout = (overrides: Partial<PayoutRequest> = {}): PayoutRequest => ({
  rail: 'railA',
  idempotencyKey: 'stl_batch_1',
  batchId: 'stl_batch_1',
  partnerId: 'ptn_1',
  clientId: 'merchant-1',
  amountMinor: 1050,
  currency: currencyCode('USD'),
  ...overrides,
});

const PAID = { transfer_id: 'tr_a_1', batch_id: 'stl_batch_1', amount: 10.5, currency: 'USD', status: 'paid' };

/** The error a call rejects with (and a failure of the test if it resolves). */
async function rejection(call: Promise<unknown>): Promise<Error> {
  const outcome = await call.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) throw new Error(`expected the call to reject, it resolved with ${JSON.stringify(outcome.value)}`);
  return outcome.error as Error;
}

const BATCH = '0b9e4c52-6a3e-4f0e-9a53-2f1d7c0e8a11';
const lookup = (rail: 'railA' | 'railB' = 'railA', idempotencyKey = BATCH) => ({ rail, idempotencyKey });

describe('the HTTP rails adapter', () => {
  it('POSTs the payout to the rail of the request, in major units, with its key and the idempotency key', async () => {
    // Arrange
    const { fetch, sent } = scriptedFetch(() => json(200, PAID));
    const adapter = rails(fetch);

    // Act
    await adapter.pay(payout());
    await adapter.pay(payout({ rail: 'railB', idempotencyKey: 'stl_batch_2', batchId: 'stl_batch_2', amountMinor: 1500, currency: currencyCode('JPY') }));
    await adapter.pay(payout({ rail: 'railB', idempotencyKey: 'stl_batch_3', batchId: 'stl_batch_3', amountMinor: 1234, currency: currencyCode('KWD') }));

    // Assert
    expect(sent[0]).toMatchObject({
      url: 'https://rail-a.example/v1/payouts',
      method: 'POST',
      headers: { authorization: `Bearer ${KEYS.railA}`, 'idempotency-key': 'stl_batch_1', 'content-type': 'application/json' },
      body: { batch_id: 'stl_batch_1', amount: 10.5, currency: 'USD', partner_id: 'ptn_1', client_id: 'merchant-1' },
    });
    expect(sent[1]).toMatchObject({
      url: 'https://rail-b.example/payouts',
      headers: { authorization: `Bearer ${KEYS.railB}`, 'idempotency-key': 'stl_batch_2' },
      body: { batch_id: 'stl_batch_2', amount: 1500, currency: 'JPY' },
    });
    expect(sent[2]?.body).toMatchObject({ amount: 1.234, currency: 'KWD' });
    expect(sent.every((request) => request.signal instanceof AbortSignal)).toBe(true);
  });

  it('answers paid with the transfer on a 200 paid (a first payment or a replay)', async () => {
    const { fetch } = scriptedFetch(() => json(200, PAID));

    expect(await rails(fetch).pay(payout())).toEqual({ outcome: 'paid', transferId: 'tr_a_1' });
  });

  it("answers failed with the rail's transfer and reason on a 422 failed", async () => {
    const { fetch } = scriptedFetch(() => json(422, { transfer_id: 'tr_a_2', status: 'failed', reason: 'account closed' }));

    expect(await rails(fetch).pay(payout())).toEqual({ outcome: 'failed', transferId: 'tr_a_2', reason: 'rail A refused the payout: account closed' });
  });

  it('answers failed, naming no key, when the rail refuses the credentials (401) or the request (400): nothing was paid', async () => {
    const refusedKey = scriptedFetch(() => json(401, { error: 'bad key' })).fetch;
    const refusedRequest = scriptedFetch(() => json(400, { error: 'amount must be a positive number' })).fetch;

    const keyResult = await rails(refusedKey).pay(payout({ rail: 'railB' }));
    const requestResult = await rails(refusedRequest).pay(payout());

    expect(keyResult).toEqual({ outcome: 'failed', transferId: null, reason: 'rail B refused the credentials' });
    expect(requestResult).toEqual({ outcome: 'failed', transferId: null, reason: 'rail A refused the request: amount must be a positive number' });
  });

  it.each([
    ['a 409 (the key was paid for another payout)', () => json(409, { error: 'Idempotency-Key already paid another payout' }), /rail A answered HTTP 409/],
    ['a 500', () => json(500, { error: 'boom' }), /rail A answered HTTP 500/],
    ['a 503 without a body', () => new Response(null, { status: 503 }), /rail A answered HTTP 503/],
    ['a redirect', () => new Response(null, { status: 302, headers: { location: 'https://elsewhere.example/' } }), /rail A answered HTTP 302/],
    ['a 200 that is not JSON', () => new Response('<html>ok</html>', { status: 200 }), /rail A answered HTTP 200 .*not JSON/],
    ['a 200 that is not paid', () => json(200, { ...PAID, status: 'pending' }), /rail A answered HTTP 200 .*not a paid transfer/],
    ['a 200 without a transfer id', () => json(200, { ...PAID, transfer_id: 7 }), /rail A answered HTTP 200 .*not a paid transfer/],
    ['a 422 that is not a failed transfer', () => json(422, { error: 'unprocessable' }), /rail A answered HTTP 422/],
  ])('throws PayoutOutcomeUnknown on %s, naming the rail and the status but never the key', async (_case, answer, message) => {
    const { fetch } = scriptedFetch(answer);

    const error = await rejection(rails(fetch).pay(payout()));

    expect(error).toBeInstanceOf(PayoutOutcomeUnknown);
    expect(error.message).toMatch(message);
    expect(error.message).not.toContain(KEYS.railA);
  });

  /** Both calls share the transport: each transport test runs for a payout and for a lookup. */
  type Call = (rail: ReturnType<typeof rails>, name?: 'railA' | 'railB') => Promise<unknown>;
  const calls: Array<[string, Call]> = [
    ['a payout', (rail, name = 'railA') => rail.pay(payout({ rail: name }))],
    ['a lookup', (rail, name = 'railA') => rail.findPaid(lookup(name))],
  ];

  it.each(calls)('throws PayoutOutcomeUnknown naming the connection error when the rail cannot be reached (%s)', async (_call, call) => {
    const { fetch } = scriptedFetch(() => {
      throw new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:443'), { code: 'ECONNREFUSED' }) });
    });

    const error = await rejection(call(rails(fetch), 'railB'));

    expect(error).toBeInstanceOf(PayoutOutcomeUnknown);
    expect(error.message).toMatch(/rail B could not be reached \(ECONNREFUSED\)/);
  });

  it.each(calls)('bounds the call by the request deadline: a rail that never answers is an unknown outcome before the deadline (%s)', async (_call, call) => {
    // Arrange: a rail that answers only when the call is aborted
    const { fetch } = scriptedFetch(
      (sent) => new Promise<Response>((_resolve, reject) => sent.signal?.addEventListener('abort', () => reject(sent.signal?.reason))),
    );
    const started = Date.now();

    // Act
    const error = await rejection(runWithDeadline(started + 1_400, () => call(rails(fetch))));

    // Assert: cut off a second before the deadline (time for the use case to record the outcome)
    expect(error).toBeInstanceOf(PayoutOutcomeUnknown);
    expect(error.message).toMatch(/rail A did not answer within \d+ ms/);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('sends nothing and answers failed when no time is left before the request deadline', async () => {
    const { fetch, sent } = scriptedFetch(() => json(200, PAID));

    const result = await runWithDeadline(Date.now() + 500, () => rails(fetch).pay(payout()));

    expect(result).toMatchObject({ outcome: 'failed', transferId: null, reason: expect.stringMatching(/no time left to call rail A/) });
    expect(sent).toHaveLength(0);
  });

  it('sends nothing and answers failed "rail X is not configured" when a rail has no base URL or no key', async () => {
    const { fetch, sent } = scriptedFetch(() => json(200, PAID));
    const noBase = rails(fetch, KEYS, { railABase: 'https://rail-a.example', railBBase: undefined });
    const noKey = rails(fetch, { railA: undefined, railB: KEYS.railB });

    expect(await noBase.pay(payout({ rail: 'railB' }))).toEqual({ outcome: 'failed', transferId: null, reason: 'rail B is not configured' });
    expect(await noKey.pay(payout())).toEqual({ outcome: 'failed', transferId: null, reason: 'rail A is not configured' });
    expect(sent).toHaveLength(0);
  });

  it('sends nothing and answers failed when the rail keys cannot be read', async () => {
    const { fetch, sent } = scriptedFetch(() => json(200, PAID));
    const adapter = createHttpRails({
      railABase: 'https://rail-a.example',
      railBBase: 'https://rail-b.example',
      loadKeys: () => Promise.reject(new Error('AccessDeniedException')),
      fetch,
    });

    expect(await adapter.pay(payout())).toEqual({ outcome: 'failed', transferId: null, reason: 'the rail keys could not be read' });
    expect(sent).toHaveLength(0);
  });
});

describe('the HTTP rails adapter asking whether a key was paid (findPaid)', () => {

  it('GETs {base}/payouts/{key} on the rail of the lookup, with its key, the key url-encoded, bounded by a signal', async () => {
    // Arrange
    const { fetch, sent } = scriptedFetch(() => json(200, PAID));
    const adapter = rails(fetch);

    // Act
    await adapter.findPaid(lookup());
    await adapter.findPaid(lookup('railB', 'batch 2/ä?#'));

    // Assert
    expect(sent[0]).toMatchObject({
      url: `https://rail-a.example/v1/payouts/${BATCH}`,
      method: 'GET',
      headers: { authorization: `Bearer ${KEYS.railA}` },
      body: undefined,
    });
    expect(sent[1]).toMatchObject({
      url: 'https://rail-b.example/payouts/batch%202%2F%C3%A4%3F%23',
      method: 'GET',
      headers: { authorization: `Bearer ${KEYS.railB}` },
    });
    expect(sent.every((request) => request.signal instanceof AbortSignal)).toBe(true);
  });

  it('answers the transfer on a 200 paid', async () => {
    const { fetch } = scriptedFetch(() => json(200, PAID));

    expect(await rails(fetch).findPaid(lookup())).toEqual({ transferId: 'tr_a_1' });
  });

  it('answers null on the protocol`s 404 naming the key: the rail paid nothing under it', async () => {
    const { fetch } = scriptedFetch(() => json(404, { error: 'No payout paid under this key', idempotency_key: lookup('railB').idempotencyKey }));

    expect(await rails(fetch).findPaid(lookup('railB'))).toBeNull();
  });

  it.each([
    ['a 401 (the key was refused: the rail did not say)', () => json(401, { error: 'bad key' }), /rail A answered HTTP 401/],
    ['a 500', () => json(500, { error: 'boom' }), /rail A answered HTTP 500/],
    ['a 503 without a body', () => new Response(null, { status: 503 }), /rail A answered HTTP 503/],
    ['a redirect', () => new Response(null, { status: 302, headers: { location: 'https://elsewhere.example/' } }), /rail A answered HTTP 302/],
    ['a 404 page that is not the protocol\'s (a proxy, a wrong base URL)', () => new Response('<html>Not Found</html>', { status: 404 }), /HTTP 404/],
    ['a JSON 404 that names no key (a rail without the lookup route: "no such route")', () => json(404, { error: 'No such route' }), /HTTP 404/],
    ['a JSON 404 naming another key', () => json(404, { error: 'none', idempotency_key: 'another-batch' }), /HTTP 404/],
    ['a 200 that is not JSON', () => new Response('<html>ok</html>', { status: 200 }), /rail A answered HTTP 200 .*not JSON/],
    ['a 200 that is not paid (a failed attempt)', () => json(200, { ...PAID, status: 'failed' }), /rail A answered HTTP 200 .*not a paid transfer/],
    ['a 200 without a transfer id', () => json(200, { ...PAID, transfer_id: 7 }), /rail A answered HTTP 200 .*not a paid transfer/],
  ])('throws PayoutOutcomeUnknown on %s, never naming the key', async (_case, answer, message) => {
    const { fetch } = scriptedFetch(answer);

    const error = await rejection(rails(fetch).findPaid(lookup()));

    expect(error).toBeInstanceOf(PayoutOutcomeUnknown);
    expect(error.message).toMatch(message);
    expect(error.message).not.toContain(KEYS.railA);
  });

  it('throws PayoutOutcomeUnknown, sending nothing, when it cannot ask: no time left, a rail not configured, keys unreadable', async () => {
    // Arrange
    const { fetch, sent } = scriptedFetch(() => json(404, { error: 'none' }));
    const noBase = rails(fetch, KEYS, { railABase: 'https://rail-a.example', railBBase: undefined });
    const noKey = rails(fetch, { railA: undefined, railB: KEYS.railB });
    const noKeys = createHttpRails({
      railABase: 'https://rail-a.example',
      railBBase: 'https://rail-b.example',
      loadKeys: () => Promise.reject(new Error('AccessDeniedException')),
      fetch,
    });

    // Act
    const errors = await Promise.all([
      rejection(runWithDeadline(Date.now() + 500, () => rails(fetch).findPaid(lookup()))),
      rejection(noBase.findPaid(lookup('railB'))),
      rejection(noKey.findPaid(lookup())),
      rejection(noKeys.findPaid(lookup())),
    ]);

    // Assert: "cannot ask" is "cannot tell", never "paid nothing"
    expect(errors.every((error) => error instanceof PayoutOutcomeUnknown)).toBe(true);
    expect(errors.map((error) => error.message)).toEqual([
      expect.stringMatching(/no time left to call rail A/),
      expect.stringMatching(/rail B is not configured/),
      expect.stringMatching(/rail A is not configured/),
      expect.stringMatching(/the rail keys could not be read/),
    ]);
    expect(sent).toHaveLength(0);
  });
});
