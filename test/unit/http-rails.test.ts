/**
 * The HTTP rails adapter against a scripted rail (an injected fetch): the request it sends (docs/rails.md) and how
 * each answer maps to the port's outcomes. The adapter against the sandbox rails over real HTTP is
 * test/integration/rails-sandbox.test.ts.
 */
import { describe, expect, it } from '@jest/globals';
import { runWithDeadline } from '../../lib/deadline';
import { currencyCode } from '../../lib/domain/money';
import { createHttpRails } from '../../lib/payouts/http-rails';
import { PayoutOutcomeUnknown, type PayoutRequest } from '../../lib/payouts/port';
import { railKeysFromEnvironment, type RailKeys } from '../../lib/payouts/rail-keys';

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
      body: JSON.parse(String(init?.body)),
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

/** The error a pay rejects with (and a failure of the test if it resolves). */
async function rejection(pay: Promise<unknown>): Promise<Error> {
  const outcome = await pay.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) throw new Error(`expected the pay to reject, it resolved with ${JSON.stringify(outcome.value)}`);
  return outcome.error as Error;
}

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

  it('throws PayoutOutcomeUnknown naming the connection error when the rail cannot be reached', async () => {
    const { fetch } = scriptedFetch(() => {
      throw new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:443'), { code: 'ECONNREFUSED' }) });
    });

    const error = await rejection(rails(fetch).pay(payout({ rail: 'railB' })));

    expect(error).toBeInstanceOf(PayoutOutcomeUnknown);
    expect(error.message).toMatch(/rail B could not be reached \(ECONNREFUSED\)/);
  });

  it('bounds the call by the request deadline: a rail that never answers is an unknown outcome before the deadline', async () => {
    // Arrange: a rail that answers only when the call is aborted
    const { fetch } = scriptedFetch(
      (sent) => new Promise<Response>((_resolve, reject) => sent.signal?.addEventListener('abort', () => reject(sent.signal?.reason))),
    );
    const started = Date.now();

    // Act
    const error = await rejection(runWithDeadline(started + 1_400, () => rails(fetch).pay(payout())));

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
