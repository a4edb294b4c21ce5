/** GET /transactions and GET /transactions/{svc_tx_id}: paging, filters and partner isolation. */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { TestApi, type PartnerCredentials } from '../../support/api';

let api: TestApi;
let a: PartnerCredentials;
let b: PartnerCredentials;
let aClients: string[];
const created: Array<{ svcTxId: string; clientId: string; reference: string; status: string }> = [];

beforeAll(async () => {
  api = await TestApi.start();
  a = await api.createPartner();
  b = await api.createPartner();
  aClients = [await api.createClient(a), await api.createClient(a)];
  // Five transactions for A, alternating clients and flows; one for B.
  for (let i = 0; i < 5; i++) {
    const clientId = aClients[i % 2] ?? '';
    const reference = `ref-${i}-${randomUUID().slice(0, 6)}`;
    const path = i < 3 ? '/transactions/checkout-intent' : '/transactions/initialize';
    const payload: Record<string, unknown> = { partner_id: a.partnerId, client_id: clientId, amount: 10 + i, currency: 'GBP', partner_reference: reference };
    if (i < 3) payload.email = 'buyer@example.com';
    const response = await api.signed(a, path, payload);
    created.push({ svcTxId: response.body.svc_tx_id, clientId, reference, status: response.body.status });
  }
  await api.signed(b, '/transactions/initialize', {
    partner_id: b.partnerId,
    client_id: await api.createClient(b),
    amount: 1,
    currency: 'USD',
    partner_reference: 'b-only',
  });
}, 60_000);
afterAll(() => api.close());

type Page = { status: number; body: { items: Array<Record<string, any>>; next_cursor: string | null } };

async function walk(credentials: Pick<PartnerCredentials, 'apiKey'>, query: string) {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page: Page = await api.read(credentials, `/transactions?${query}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
    expect(page.status).toBe(200);
    ids.push(...page.body.items.map((item) => item.svcTxId as string));
    cursor = page.body.next_cursor;
    pages++;
  } while (cursor !== null && pages < 50);
  return { ids, pages };
}

describe('GET /transactions', () => {
  it('pages with limit=2 through every transaction exactly once, newest first', async () => {
    const { ids, pages } = await walk(a, 'limit=2');

    expect(ids).toEqual(created.map((tx) => tx.svcTxId).reverse());
    expect(new Set(ids).size).toBe(ids.length);
    expect(pages).toBe(3);
  });

  it('returns every field of the Transaction resource, camelCase, money in major units', async () => {
    const page = await api.read(a, '/transactions?limit=1');

    expect(Object.keys(page.body.items[0]).sort()).toEqual(
      [
        'id', 'svcTxId', 'partnerId', 'partnerName', 'clientId', 'clientName', 'partnerReference', 'processorPaymentIntentId',
        'amount', 'currency', 'status', 'processorFeePercent', 'partnerFeePercent', 'partnerPayoutPercent', 'svcEarningPercent',
        'svcEarningAmount', 'processorFee', 'platformFee', 'netAmount', 'settlementStatus', 'createdAt', 'updatedAt', 'meta',
        // decisions.md §5a: what was refunded and disputed, and the dispute's status
        'refundedAmount', 'disputedAmount', 'disputeStatus',
      ].sort(),
    );
    expect(page.body.items[0]).toMatchObject({ svcTxId: created[4]?.svcTxId, amount: 14, currency: 'GBP', partnerId: a.partnerId });
    expect(page.body.items[0]).toMatchObject({ refundedAmount: 0, disputedAmount: 0, disputeStatus: null });
  });

  it('filters by status, client_id and partner_reference, paging within the filter', async () => {
    const pending = await walk(a, 'limit=1&status=pending');
    const initialized = await walk(a, 'status=initialized');
    const firstClient = await walk(a, `limit=2&client_id=${aClients[0]}`);
    const byReference = await walk(a, `partner_reference=${created[2]?.reference}`);

    expect(pending.ids).toEqual(created.filter((tx) => tx.status === 'pending').map((tx) => tx.svcTxId).reverse());
    expect(initialized.ids).toEqual(created.filter((tx) => tx.status === 'initialized').map((tx) => tx.svcTxId).reverse());
    expect(firstClient.ids).toEqual(created.filter((tx) => tx.clientId === aClients[0]).map((tx) => tx.svcTxId).reverse());
    expect(byReference.ids).toEqual([created[2]?.svcTxId]);
  });

  it('filters by creation time (created_from, created_to inclusive)', async () => {
    const all = await api.read(a, '/transactions?limit=200');
    const times = (all.body.items as Array<{ createdAt: string; svcTxId: string }>).map((tx) => tx.createdAt).sort();
    const middle = times[2] ?? '';

    const from = await walk(a, `created_from=${encodeURIComponent(middle)}`);
    const to = await walk(a, `created_to=${encodeURIComponent(middle)}`);
    const future = await walk(a, 'created_from=2999-01-01');

    expect(from.ids).toHaveLength(times.filter((time) => time >= middle).length);
    expect(to.ids).toHaveLength(times.filter((time) => time <= middle).length);
    expect(future.ids).toEqual([]);
  });

  it("never shows partner B partner A's transactions", async () => {
    const bList = await walk(b, 'limit=200');
    const bRead = await api.read(b, `/transactions/${created[0]?.svcTxId}`);
    const bNamingA = await api.read(b, `/transactions?partner_id=${a.partnerId}`);
    const firstPage: Page = await api.read(a, '/transactions?limit=1');
    const bWithACursor = await api.read(b, `/transactions?cursor=${encodeURIComponent(firstPage.body.next_cursor ?? '')}`);

    expect(bList.ids.some((id) => created.some((tx) => tx.svcTxId === id))).toBe(false);
    expect(bList.ids).toHaveLength(1);
    expect(bRead.status).toBe(404);
    expect(bRead.body.code).toBe('TX_NOT_FOUND');
    expect(bNamingA.status).toBe(403);
    expect(bWithACursor.status).toBe(400);
  });

  it('lets a platform key read every partner, or one partner with partner_id', async () => {
    const platform = await api.createPlatformKey();

    const onlyA = await walk(platform, `partner_id=${a.partnerId}&limit=2`);
    const everything = await api.read(platform, '/transactions?limit=200');
    const one = await api.read(platform, `/transactions/${created[1]?.svcTxId}`);

    expect(onlyA.ids).toEqual(created.map((tx) => tx.svcTxId).reverse());
    const partners = new Set((everything.body.items as Array<{ partnerId: string }>).map((tx) => tx.partnerId));
    expect(partners.has(a.partnerId) && partners.has(b.partnerId)).toBe(true);
    expect(one.status).toBe(200);
  });

  it('refuses bad query parameters with 400 VALIDATION_ERROR', async () => {
    for (const query of ['limit=0', 'limit=201', 'status=paid', 'created_from=yesterday', 'created_from=2026-02-01&created_to=2026-01-01', 'cursor=%%%', `cursor=${Buffer.from('{"pk":""}').toString('base64url')}`]) {
      const response = await api.read(a, `/transactions?${query}`);
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('VALIDATION_ERROR');
    }
  });

  it('answers 404 TX_NOT_FOUND for an unknown svc_tx_id and 401 without a key', async () => {
    const unknown = await api.read(a, '/transactions/svc_tx_000000000000000000000000');
    const anonymous = await api.request('GET', '/transactions');

    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('TX_NOT_FOUND');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.code).toBe('API_KEY_MISSING');
  });
});
