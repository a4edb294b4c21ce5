/**
 * The sandbox checkout's own partner (infra/local/sandbox/checkout/): made once on the first request through the
 * admin and partner APIs, however many requests arrive together; kept in its state directory and found again by a
 * restarted runtime; made anew when the kept key no longer works; and a 503 that says why when it cannot be made.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SANDBOX_MERCHANT, type SandboxCheckout, sandboxCheckout } from '../../../infra/local/sandbox/checkout/checkout';
import { TestApi } from '../../support/api';
import { waitFor } from '../../support/npm-start';

// Each mounted checkout starts its backend as a process (a second or two through tsx, longer on a busy machine);
// some tests start two.
jest.setTimeout(30_000);

let api: TestApi;
const dirs: string[] = [];
const servers: Server[] = [];
/** Every mounted checkout: each runs its backend in a process of its own, stopped before the API it calls. */
const sandboxes: SandboxCheckout[] = [];

beforeAll(async () => {
  api = await TestApi.start();
});

afterAll(async () => {
  await Promise.all(sandboxes.map((sandbox) => sandbox.stop()));
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  await api?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A state directory of the test's own. */
function newStateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-checkout-state-'));
  dirs.push(dir);
  return dir;
}

/** A runtime's sandbox checkout on a server of its own (as `npm start` mounts it), against the test API. */
async function mounted(stateDir: string, options: { adminToken?: () => Promise<string> } = {}): Promise<{ url: string; sandbox: SandboxCheckout; server: Server }> {
  const sandbox = sandboxCheckout({
    apiOrigin: new URL(api.baseUrl).origin,
    processorJsUrl: 'http://127.0.0.1:12111/v3/',
    adminToken: options.adminToken ?? (async () => api.adminToken),
    stateDir,
  });
  sandboxes.push(sandbox);
  const server = createServer((request, response) => sandbox.handle(request, response));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/sandbox`, sandbox, server };
}

const keptPartner = (stateDir: string) => (JSON.parse(readFileSync(join(stateDir, 'state.json'), 'utf8')) as { partner_id: string }).partner_id;

/** The sandbox partners created since `since` (their `partner.created` audit events, platform-wide). */
async function sandboxPartnersCreatedSince(since: string): Promise<string[]> {
  type Created = { partner_id: string; created_at: string; details: { name?: string } };
  const made: string[] = [];
  let cursor: string | null = null;
  // Newest first, shared with every test file: read until the events are older than `since`.
  do {
    const page = await api.admin('GET', `/admin/audit-events?type=partner.created&limit=200${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
    const items = page.body.items as Created[];
    made.push(...items.filter((event) => event.created_at >= since && event.details.name === 'Sandbox checkout').map((event) => event.partner_id));
    cursor = items.some((event) => event.created_at < since) ? null : (page.body.next_cursor as string | null);
  } while (cursor !== null);
  return made;
}

describe('the sandbox checkout partner', () => {
  it('is made once on the first requests (10 at once), active with approved KYC, with a webhook endpoint for every event, and kept', async () => {
    const since = new Date().toISOString();
    const stateDir = newStateDir();
    const { url } = await mounted(stateDir);

    const answers = await Promise.all(Array.from({ length: 10 }, () => fetch(`${url}/products`).then((response) => response.status)));
    const partnerId = keptPartner(stateDir);
    const partner = await api.admin('GET', `/admin/partners/${partnerId}`);
    const endpoints = await api.admin('GET', `/admin/partners/${partnerId}/webhook-endpoints`);

    expect(answers).toEqual(Array(10).fill(200));
    expect(await sandboxPartnersCreatedSince(since)).toEqual([partnerId]);
    expect(partner.body).toMatchObject({ partner_id: partnerId, name: 'Sandbox checkout', status: 'active', kyc_status: 'approved' });
    expect(endpoints.body.items).toEqual([
      expect.objectContaining({
        url: `${new URL(api.baseUrl).origin}/sandbox/webhooks/payments`,
        // The five status events and the ledger's two opt-in ones (decisions.md §5a).
        events: [
          'transaction_succeeded',
          'transaction_failed',
          'transaction_abandoned',
          'transaction_refunded',
          'transaction_chargeback',
          'transaction_partially_refunded',
          'transaction_dispute_closed',
        ],
      }),
    ]);
    // The credentials are readable by the owner only.
    expect(statSync(join(stateDir, 'state.json')).mode & 0o077).toBe(0);
  });

  it('is found again by a restarted runtime, whose checkout pays its merchant', async () => {
    const stateDir = newStateDir();
    await fetch(`${(await mounted(stateDir)).url}/products`);
    const before = keptPartner(stateDir);
    const since = new Date().toISOString();
    const { url } = await mounted(stateDir);

    const post = (path: string, body: unknown) => fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const order = (await (await post('/orders', { sku: 'tshirt' })).json()) as { partner_reference: string };
    const checkout = await post('/checkout', { partner_reference: order.partner_reference });
    const body = (await checkout.json()) as { svc_tx_id: string };
    const transaction = await api.admin('GET', `/admin/transactions/${body.svc_tx_id}`);

    expect(keptPartner(stateDir)).toBe(before);
    expect(await sandboxPartnersCreatedSince(since)).toEqual([]);
    expect(checkout.status).toBe(201);
    expect(transaction.body).toMatchObject({ partnerId: before, clientId: SANDBOX_MERCHANT, amount: 25, currency: 'USD', status: 'pending' });
  });

  it('is made anew, without a restart, once its key is revoked while the runtime runs', async () => {
    const stateDir = newStateDir();
    const { url } = await mounted(stateDir);
    const post = (path: string, body: unknown) => fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    await fetch(`${url}/products`);
    const before = keptPartner(stateDir);
    const keys = await api.admin('GET', `/admin/partners/${before}/api-keys`);
    for (const key of keys.body.items as { key_id: string }[]) await api.admin('DELETE', `/admin/api-keys/${key.key_id}`);

    // The revoked key's checkout is refused (502), which has the key checked; a later checkout gets a new partner.
    const order = (await (await post('/orders', { sku: 'tshirt' })).json()) as { partner_reference: string };
    const refused = await post('/checkout', { partner_reference: order.partner_reference });
    const after = await waitFor(async () => {
      const again = (await (await post('/orders', { sku: 'tshirt' })).json()) as { partner_reference: string };
      const checkout = await post('/checkout', { partner_reference: again.partner_reference });
      return checkout.status === 201 ? keptPartner(stateDir) : undefined;
    }, 10_000, 'a checkout with a new sandbox partner');

    expect(refused.status).toBe(502);
    expect(after).not.toBe(before);
  });

  it('stays suspended when an admin suspends it: the page answers 503 and no new partner is made; activated, it pays again', async () => {
    const stateDir = newStateDir();
    await fetch(`${(await mounted(stateDir)).url}/products`);
    const partnerId = keptPartner(stateDir);
    await api.admin('PATCH', `/admin/partners/${partnerId}`, { status: 'suspended' });
    const since = new Date().toISOString();
    const { url } = await mounted(stateDir);

    const suspended = await fetch(`${url}/products`);
    const refusal = (await suspended.json()) as { error: string };
    await api.admin('PATCH', `/admin/partners/${partnerId}`, { status: 'active' });
    const activated = await fetch(`${url}/products`);

    expect([suspended.status, refusal.error]).toEqual([503, expect.stringContaining('answered 403')]);
    expect(activated.status).toBe(200);
    expect(keptPartner(stateDir)).toBe(partnerId);
    expect(await sandboxPartnersCreatedSince(since)).toEqual([]);
  });

  it('is made anew when the kept key was revoked', async () => {
    const stateDir = newStateDir();
    await fetch(`${(await mounted(stateDir)).url}/products`);
    const before = keptPartner(stateDir);
    const keys = await api.admin('GET', `/admin/partners/${before}/api-keys`);
    for (const key of keys.body.items as { key_id: string }[]) await api.admin('DELETE', `/admin/api-keys/${key.key_id}`);
    const { url } = await mounted(stateDir);

    const products = await fetch(`${url}/products`);

    expect(products.status).toBe(200);
    expect(keptPartner(stateDir)).not.toBe(before);
  });

  it('stops by refusing new requests (503) and answering the ones running, before the HTTP API it calls stops', async () => {
    const { url, sandbox, server } = await mounted(newStateDir());
    await fetch(`${url}/products`);
    // A buyer's order still arriving when the stop begins: its body half sent, the rest once the stop is under way.
    const target = new URL(`${url}/orders`);
    const arrived = once(server, 'request');
    let finishBody = () => undefined as void;
    const running = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = httpRequest({ host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers: { 'content-type': 'application/json' } }, (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      });
      request.on('error', reject);
      request.write('{"sku":');
      finishBody = () => void request.end('"tshirt"}');
    });
    await arrived;

    let stopped = false;
    const stopping = sandbox.stop().then(() => (stopped = true));
    const refused = await fetch(`${url}/products`);
    const stoppedBeforeAnswer = stopped;
    finishBody();
    const answered = await running;
    await stopping;

    expect([refused.status, refused.headers.get('retry-after')]).toEqual([503, '1']);
    expect(stoppedBeforeAnswer).toBe(false);
    expect(answered.status).toBe(201);
    expect(JSON.parse(answered.body)).toMatchObject({ name: 'Sandbox T-shirt', amount: 25 });
  });

  it('answers 503 saying why when the partner cannot be made, and tries again on the next request', async () => {
    let token = 'not-a-token';
    const { url } = await mounted(newStateDir(), { adminToken: async () => token });

    const refused = await fetch(`${url}/products`);
    const refusal = (await refused.json()) as { error: string; code: string };
    token = api.adminToken;
    const retried = await fetch(`${url}/products`);

    expect([refused.status, refused.headers.get('retry-after'), refusal.code]).toEqual([503, '1', 'SERVICE_UNAVAILABLE']);
    expect(refusal.error).toMatch(/POST \/admin\/partners answered 401/);
    expect(retried.status).toBe(200);
  });
});
