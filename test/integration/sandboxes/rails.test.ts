/**
 * The sandbox rails (infra/local/sandbox/rails/index.ts) driven over HTTP through the service's own adapter
 * (lib/payouts/http-rails.ts), as the pay use case drives them: the rail protocol of docs/rails.md, the control
 * routes of decisions.md §1, idempotency under concurrency and across a restart.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRailsSandbox, type RailsSandbox } from '../../../infra/local/sandbox/rails';
import { RailsApi } from '../../../infra/local/sandbox/rails/api';
import { RailLedger } from '../../../infra/local/sandbox/rails/ledger';
import { runWithDeadline } from '../../../lib/deadline';
import { currencyCode } from '../../../lib/domain/money';
import { createHttpRails } from '../../../lib/payouts/http-rails';
import { PayoutOutcomeUnknown, type PayoutRails, type PayoutRequest } from '../../../lib/use-cases/ports/payouts';
import { railKeysFromEnvironment, type RailKeys } from '../../../lib/payouts/rail-keys';
import { freePort } from '../../support/ports';

const KEYS = { railA: 'rail_a_sandbox_local', railB: 'rail_b_sandbox_local' };

interface TransferItem {
  transfer_id: string;
  batch_id: string;
  amount: number;
  currency: string;
  status: 'paid' | 'failed';
}

let dataDir: string;
let port: number;
const running: RailsSandbox[] = [];

/** The sandbox on this test's port, keeping its state in this test's directory (as `npm start` does). */
async function start(): Promise<RailsSandbox> {
  const sandbox = await startRailsSandbox({ port, keys: KEYS, stateDir: join(dataDir, 'rails-sandbox') });
  running.push(sandbox);
  return sandbox;
}

async function stop(sandbox: RailsSandbox): Promise<void> {
  running.splice(running.indexOf(sandbox), 1);
  await sandbox.close();
}

const adapterFor = (sandbox: RailsSandbox, keys: RailKeys = KEYS): PayoutRails =>
  createHttpRails({ railABase: `${sandbox.url}/rail-a`, railBBase: `${sandbox.url}/rail-b`, loadKeys: railKeysFromEnvironment(keys) });

let batches = 0;
/** A payout of a batch of its own (the batch id is the idempotency key, as the use case sends it). */
const payout = (overrides: Partial<PayoutRequest> = {}): PayoutRequest => {
  const batchId = `stl_test_${++batches}_${Date.now()}`;
  return { rail: 'railA', idempotencyKey: batchId, batchId, partnerId: 'ptn_1', clientId: 'merchant-1', amountMinor: 1050, currency: currencyCode('USD'), ...overrides };
};

async function transfers(sandbox: RailsSandbox, rail: 'rail-a' | 'rail-b'): Promise<TransferItem[]> {
  const response = await fetch(`${sandbox.url}/${rail}/transfers`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { items: TransferItem[] }).items;
}

async function failNext(sandbox: RailsSandbox, rail: 'rail-a' | 'rail-b'): Promise<void> {
  const response = await fetch(`${sandbox.url}/${rail}/fail-next`, { method: 'POST' });
  expect(response.status).toBe(200);
  expect(await response.json()).toEqual({ fail_next: true });
}

/** A raw POST /payouts, for what the adapter never sends. */
function post(sandbox: RailsSandbox, path: string, body: string, headers: Record<string, string> = {}) {
  return fetch(`${sandbox.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEYS.railA}`, 'idempotency-key': `raw-${++batches}`, 'content-type': 'application/json', ...headers },
    body,
  });
}

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'rails-sandbox-'));
  port = await freePort();
});
afterEach(async () => {
  for (const sandbox of running.splice(0)) await sandbox.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the sandbox rails through the HTTP rails adapter', () => {
  it('pays a batch on rail A and lists the transfer', async () => {
    // Arrange
    const sandbox = await start();
    const request = payout();

    // Act
    const result = await adapterFor(sandbox).pay(request);

    // Assert
    expect(result).toEqual({ outcome: 'paid', transferId: expect.stringMatching(/^tr_a_[A-Za-z0-9]{12,}$/) });
    expect(await transfers(sandbox, 'rail-a')).toEqual([
      { transfer_id: result.transferId, batch_id: request.batchId, amount: 10.5, currency: 'USD', status: 'paid' },
    ]);
  });

  it('replays a paid idempotency key: the same transfer, nothing paid again', async () => {
    const sandbox = await start();
    const rails = adapterFor(sandbox);
    const request = payout();

    const first = await rails.pay(request);
    const again = await rails.pay(request);

    expect(again).toEqual(first);
    expect(await transfers(sandbox, 'rail-a')).toHaveLength(1);
  });

  it('fails the next attempt after fail-next (422: failed), and the same key then pays as a new try', async () => {
    // Arrange
    const sandbox = await start();
    const rails = adapterFor(sandbox);
    const request = payout();
    await failNext(sandbox, 'rail-a');

    // Act
    const failed = await rails.pay(request);
    const retried = await rails.pay(request);
    const other = await rails.pay(payout());

    // Assert: one item per attempt, the failed one first; fail-next applied to one attempt only
    expect(failed).toEqual({ outcome: 'failed', transferId: expect.stringMatching(/^tr_a_/), reason: expect.stringMatching(/^rail A refused the payout: .+/) });
    expect(retried).toEqual({ outcome: 'paid', transferId: expect.stringMatching(/^tr_a_/) });
    expect(other.outcome).toBe('paid');
    const items = await transfers(sandbox, 'rail-a');
    expect(items.map((item) => [item.batch_id, item.status])).toEqual([
      [request.batchId, 'failed'],
      [request.batchId, 'paid'],
      [expect.any(String), 'paid'],
    ]);
    expect(items[0]?.transfer_id).toBe(failed.transferId);
    expect(items[1]?.transfer_id).not.toBe(failed.transferId);
  });

  it('keeps rail B apart: its own transfers, its own fail-next, its own keys', async () => {
    // Arrange
    const sandbox = await start();
    const rails = adapterFor(sandbox);
    await failNext(sandbox, 'rail-a');
    const yen = payout({ rail: 'railB', amountMinor: 1500, currency: currencyCode('JPY') });

    // Act
    const onB = await rails.pay(yen);
    const sameKeyOnA = await rails.pay({ ...yen, rail: 'railA', currency: currencyCode('USD') });

    // Assert: the same idempotency key is a separate payout on each rail; rail A's fail-next stayed on rail A
    expect(onB).toEqual({ outcome: 'paid', transferId: expect.stringMatching(/^tr_b_/) });
    expect(sameKeyOnA.outcome).toBe('failed');
    expect(await transfers(sandbox, 'rail-b')).toEqual([
      { transfer_id: onB.transferId, batch_id: yen.batchId, amount: 1500, currency: 'JPY', status: 'paid' },
    ]);
    expect((await transfers(sandbox, 'rail-a')).map((item) => item.status)).toEqual(['failed']);
  });

  it("answers failed (nothing paid) to a wrong key, or to rail B's key on rail A", async () => {
    const sandbox = await start();

    const wrong = await adapterFor(sandbox, { railA: 'rail_a_wrong', railB: KEYS.railB }).pay(payout());
    const crossed = await adapterFor(sandbox, { railA: KEYS.railB, railB: KEYS.railB }).pay(payout());

    expect(wrong).toEqual({ outcome: 'failed', transferId: null, reason: 'rail A refused the credentials' });
    expect(crossed).toEqual(wrong);
    expect(await transfers(sandbox, 'rail-a')).toEqual([]);
  });

  it('answers an unknown outcome (409) when a paid key comes back with another payout, and pays nothing', async () => {
    const sandbox = await start();
    const rails = adapterFor(sandbox);
    const request = payout();
    await rails.pay(request);

    const error = await rails.pay({ ...request, amountMinor: 9_999 }).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(PayoutOutcomeUnknown);
    expect((error as Error).message).toMatch(/rail A answered HTTP 409/);
    expect(await transfers(sandbox, 'rail-a')).toHaveLength(1);
  });

  it('pays once when ten pays of one key arrive together', async () => {
    const sandbox = await start();
    const rails = adapterFor(sandbox);
    const request = payout();

    const results = await Promise.all(Array.from({ length: 10 }, () => rails.pay(request)));

    const first = results[0];
    expect(first?.outcome).toBe('paid');
    expect(results.every((result) => result.outcome === 'paid' && result.transferId === first?.transferId)).toBe(true);
    expect(await transfers(sandbox, 'rail-a')).toEqual([expect.objectContaining({ transfer_id: first?.transferId, status: 'paid' })]);
  });

  it('serialises one key: a pay waiting behind a failed attempt tries anew', async () => {
    const sandbox = await start();
    const rails = adapterFor(sandbox);
    const request = payout();
    await failNext(sandbox, 'rail-a');

    const results = await Promise.all([rails.pay(request), rails.pay(request)]);

    expect(results.map((result) => result.outcome).sort()).toEqual(['failed', 'paid']);
    expect((await transfers(sandbox, 'rail-a')).map((item) => item.status)).toEqual(['failed', 'paid']);
  });

  it('remembers paid keys, transfers and a pending fail-next across a restart on its state directory', async () => {
    // Arrange: a paid batch, and a fail-next not yet used, then a restart
    const first = await start();
    const request = payout();
    const paid = await adapterFor(first).pay(request);
    await failNext(first, 'rail-b');
    await stop(first);
    const second = await start();

    // Act
    const replayed = await adapterFor(second).pay(request);
    const onB = await adapterFor(second).pay(payout({ rail: 'railB' }));

    // Assert: no second payout of the batch, and the lookup still finds it
    expect(replayed).toEqual(paid);
    expect(await adapterFor(second).findPaid({ rail: 'railA', idempotencyKey: request.idempotencyKey })).toEqual({ transferId: paid.transferId });
    expect(onB.outcome).toBe('failed');
    expect(await transfers(second, 'rail-a')).toEqual([expect.objectContaining({ transfer_id: paid.transferId, status: 'paid' })]);
  });

  it('refuses to start on a port in use, naming the port', async () => {
    await start();

    await expect(startRailsSandbox({ port, keys: KEYS })).rejects.toThrow(new RegExp(`port ${port} .*in use`, 'i'));
  });
});

describe('the sandbox rails answering whether a key was paid (findPaid through the adapter)', () => {
  const lookupOf = (request: PayoutRequest) => ({ rail: request.rail, idempotencyKey: request.idempotencyKey });

  it('finds a paid key, with the transfer_id of the payout (also for a key that needs url-encoding)', async () => {
    // Arrange
    const sandbox = await start();
    const rails = adapterFor(sandbox);
    const request = payout();
    const odd = payout({ idempotencyKey: `a/b?c#d%e&f+${batches}` });
    const paid = await rails.pay(request);
    const oddPaid = await rails.pay(odd);

    // Act
    const found = await rails.findPaid(lookupOf(request));
    const oddFound = await rails.findPaid(lookupOf(odd));

    // Assert
    expect(paid.outcome).toBe('paid');
    expect(found).toEqual({ transferId: paid.transferId });
    expect(oddFound).toEqual({ transferId: oddPaid.transferId });
    expect(await transfers(sandbox, 'rail-a')).toHaveLength(2);
  });

  it('answers null for a key with only a failed attempt, and for a key never used', async () => {
    const sandbox = await start();
    const rails = adapterFor(sandbox);
    const request = payout();
    await failNext(sandbox, 'rail-a');
    expect((await rails.pay(request)).outcome).toBe('failed');

    expect(await rails.findPaid(lookupOf(request))).toBeNull();
    expect(await rails.findPaid(lookupOf(payout()))).toBeNull();
  });

  it("answers null on one rail for a key paid on the other rail", async () => {
    const sandbox = await start();
    const rails = adapterFor(sandbox);
    const yen = payout({ rail: 'railB', amountMinor: 1500, currency: currencyCode('JPY') });
    const onB = await rails.pay(yen);

    expect(await rails.findPaid({ rail: 'railA', idempotencyKey: yen.idempotencyKey })).toBeNull();
    expect(await rails.findPaid(lookupOf(yen))).toEqual({ transferId: onB.transferId });
  });

  it("throws PayoutOutcomeUnknown (HTTP 401) to a wrong key, or to rail B's key on rail A, even for a paid key", async () => {
    // Arrange
    const sandbox = await start();
    const request = payout();
    await adapterFor(sandbox).pay(request);

    // Act
    const wrong = await adapterFor(sandbox, { railA: 'rail_a_wrong', railB: KEYS.railB }).findPaid(lookupOf(request)).catch((caught: unknown) => caught);
    const crossed = await adapterFor(sandbox, { railA: KEYS.railB, railB: KEYS.railB }).findPaid(lookupOf(request)).catch((caught: unknown) => caught);

    // Assert
    for (const error of [wrong, crossed]) {
      expect(error).toBeInstanceOf(PayoutOutcomeUnknown);
      expect((error as Error).message).toMatch(/rail A answered HTTP 401/);
    }
  });

  it('answers a lookup only once a payout in flight under the same key is answered and saved', async () => {
    // Arrange: the sandbox's HTTP side over a save that holds every payout until released
    const ledgers = { 'rail-a': new RailLedger('tr_a_'), 'rail-b': new RailLedger('tr_b_') };
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let saving: () => void = () => undefined;
    const saveStarted = new Promise<void>((resolve) => (saving = resolve));
    const api = new RailsApi({ 'rail-a': KEYS.railA, 'rail-b': KEYS.railB }, ledgers, () => (saving(), held));
    // The requests the server has taken in, and those it has answered, in order (their paths)
    const arrived: string[] = [];
    const answeredPaths: string[] = [];
    const server = createHttpServer((req, res) => {
      arrived.push(req.url ?? '');
      res.on('finish', () => answeredPaths.push(req.url ?? ''));
      void api.serve(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const rails = createHttpRails({ railABase: `${base}/rail-a`, railBBase: `${base}/rail-b`, loadKeys: railKeysFromEnvironment(KEYS) });
    const request = payout();
    const lookupPath = `/rail-a/payouts/${request.idempotencyKey}`;

    try {
      // Act: the payout is being saved when the lookup arrives
      const paying = rails.pay(request);
      await saveStarted;
      const lookingUp = rails.findPaid(lookupOf(request));
      while (!arrived.includes(lookupPath)) await new Promise((resolve) => setTimeout(resolve, 5));
      // A lookup under a key with no payout in flight, sent once the first has arrived, is answered at once: the
      // first, taken in earlier by the same steps, would have been answered before it had it not waited
      const unheld = payout();
      expect(await rails.findPaid(lookupOf(unheld))).toBeNull();
      const answeredBeforeRelease = answeredPaths.includes(lookupPath);
      release();

      // Assert: the lookup waited, then found the payout just made
      const paid = await paying;
      expect(answeredPaths).toContain(`/rail-a/payouts/${unheld.idempotencyKey}`);
      expect(answeredBeforeRelease).toBe(false);
      expect(await lookingUp).toEqual({ transferId: paid.outcome === 'paid' ? paid.transferId : 'not paid' });
    } finally {
      release();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('answers every route with x-content-type-options: nosniff (a browser never takes an answer for a page)', async () => {
    const sandbox = await start();
    const key = `nosniff-${++batches}`;
    const auth = { authorization: `Bearer ${KEYS.railA}` };

    const answers = [
      await post(sandbox, '/rail-a/payouts', JSON.stringify({ batch_id: key, amount: 1, currency: 'USD', partner_id: 'ptn_1', client_id: 'merchant-1' }), { 'idempotency-key': key }),
      await fetch(`${sandbox.url}/rail-a/payouts/${key}`, { headers: auth }),
      await fetch(`${sandbox.url}/rail-a/payouts/never-used`, { headers: auth }),
      await fetch(`${sandbox.url}/rail-a/transfers`),
      await fetch(`${sandbox.url}/rail-b/fail-next`, { method: 'POST' }),
      await fetch(`${sandbox.url}/rail-a/payouts/${key}`),
      await fetch(`${sandbox.url}/nowhere`),
    ];

    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 404, 200, 200, 401, 404]);
    for (const answer of answers) expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('serves the lookup on GET only, with JSON errors', async () => {
    const sandbox = await start();

    const posted = await post(sandbox, '/rail-a/payouts/some-key', '{}');
    const unknown = await fetch(`${sandbox.url}/rail-b/payouts/some-key`, { headers: { authorization: `Bearer ${KEYS.railB}` } });

    expect(posted.status).toBe(405);
    expect(posted.headers.get('allow')).toBe('GET');
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: expect.any(String), idempotency_key: 'some-key' });
  });
});

describe('the sandbox rails refuse bad requests, paying nothing', () => {
  const USD = (amount: unknown, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ batch_id: 'stl_raw', amount, currency: 'USD', partner_id: 'ptn_1', client_id: 'merchant-1', ...extra });

  it.each([
    ['no Idempotency-Key', USD(10), { 'idempotency-key': '' }, /Idempotency-Key/],
    ['an amount that is not a number', USD('10'), {}, /amount/],
    ['a zero amount', USD(0), {}, /amount/],
    ['a negative amount', USD(-1), {}, /amount/],
    ['more decimals than the currency has', USD(1.005), {}, /decimal/],
    ['an unknown currency', USD(10, { currency: 'QQQ' }), {}, /currency/],
    ['a lower-case currency', USD(10, { currency: 'usd' }), {}, /currency/],
    ['no batch id', USD(10, { batch_id: '' }), {}, /batch_id/],
    ['a body that is not JSON', '{"batch_id":', {}, /JSON/],
    ['a body of another content type', USD(10), { 'content-type': 'text/plain' }, /application\/json/],
  ])('400 for %s', async (_case, body, headers, message) => {
    const sandbox = await start();

    const response = await post(sandbox, '/rail-a/payouts', body, headers);

    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toMatch(message);
    expect(await transfers(sandbox, 'rail-a')).toEqual([]);
  });

  it('401 for a missing or wrong key, 404 for an unknown route, 413 for a body over 64 KB', async () => {
    const sandbox = await start();

    const noKey = await post(sandbox, '/rail-b/payouts', USD(10), { authorization: '' });
    const wrongKey = await post(sandbox, '/rail-b/payouts', USD(10), { authorization: `Bearer ${KEYS.railA}` });
    const unknown = await post(sandbox, '/rail-c/payouts', USD(10));
    const unknownGet = await fetch(`${sandbox.url}/rail-a/payouts`);
    const tooLarge = await post(sandbox, '/rail-a/payouts', USD(10, { padding: 'x'.repeat(64 * 1024) }));

    expect([noKey.status, wrongKey.status, unknown.status, tooLarge.status]).toEqual([401, 401, 404, 413]);
    expect(unknownGet.status).toBe(405);
    for (const response of [noKey, wrongKey, unknown, tooLarge]) {
      expect(response.headers.get('content-type')).toMatch(/application\/json/);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(await response.json()).toEqual({ error: expect.any(String) });
    }
    expect(await transfers(sandbox, 'rail-a')).toEqual([]);
    expect(await transfers(sandbox, 'rail-b')).toEqual([]);
  });
});

describe('the HTTP rails adapter against a rail that never answers', () => {
  let silent: Server;
  const sockets: Socket[] = [];

  beforeEach(async () => {
    // Accepts connections and reads requests, and never writes a byte back.
    silent = createServer((socket) => void sockets.push(socket.on('error', () => undefined)));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  });
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });

  it('gives up before the request deadline with an unknown outcome', async () => {
    // Arrange
    const address = silent.address();
    const base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
    const rails = createHttpRails({ railABase: base, railBBase: base, loadKeys: railKeysFromEnvironment(KEYS) });
    const started = Date.now();

    // Act
    const error = await runWithDeadline(started + 1_500, () => rails.pay(payout())).catch((caught: unknown) => caught);

    // Assert
    expect(error).toBeInstanceOf(PayoutOutcomeUnknown);
    expect((error as Error).message).toMatch(/rail A did not answer within \d+ ms/);
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(sockets.length).toBe(1);
  });
});
