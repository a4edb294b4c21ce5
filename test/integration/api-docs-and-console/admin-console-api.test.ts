/**
 * The admin console's API over HTTP: a partner's API keys and the platform-wide keys, the cross-partner
 * transaction search and read, settlement batches across partners (list, run, pay, report), and the audit events
 * of every admin change (partners created and updated, API keys issued and revoked, settlement runs and pays):
 * present after the change, with who made it and no secret, and absent when the change was refused.
 * Each test makes its own partners; data shared across partners hangs on a `client_id` made for the test (the same
 * merchant id under two partners), so no other test file's data reaches these lists.
 */
import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { API_PREFIX, routes } from '../../../lib/routes';
import { issueLocalAdminToken } from '../../../lib/auth/admin-token';
import { config } from '../../../lib/config';
import type { Transaction } from '../../../lib/domain/transaction';
import { type PartnerCredentials, TestApi } from '../../support/api';
import { type FinalStatus, railTransfers, transactionIn, yesterday } from '../../support/settlement';

/** Transactions reach their status through the processor webhook, and the file runs with the rest of the suite. */
const TEST_TIMEOUT_MS = 60_000;

let api: TestApi;
beforeAll(async () => {
  api = await TestApi.start();
});
afterAll(() => api.close());

type Page = { status: number; body: { items: Array<Record<string, any>>; next_cursor: string | null } };

/** Every item of an admin list, following `next_cursor` (at most 50 pages), and the number of pages read. */
async function readAllPages(path: string): Promise<{ items: Array<Record<string, any>>; pages: number }> {
  const items: Array<Record<string, any>> = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const separator = path.includes('?') ? '&' : '?';
    const page: Page = await api.admin('GET', `${path}${cursor === null ? '' : `${separator}cursor=${encodeURIComponent(cursor)}`}`);
    expect(page.status).toBe(200);
    items.push(...page.body.items);
    cursor = page.body.next_cursor;
    pages++;
  } while (cursor !== null && pages < 50);
  return { items, pages };
}

/** Every page of an admin list: the ids in order and the number of pages. */
async function walk(path: string, idOf: (item: Record<string, any>) => string) {
  const { items, pages } = await readAllPages(path);
  return { ids: items.map(idOf), pages };
}

const byTxId = (item: Record<string, any>) => item.svcTxId as string;
const byId = (item: Record<string, any>) => item.id as string;

const allItems = async (path: string) => (await readAllPages(path)).items;

/**
 * A list shared by every test file (platform-wide), newest first, read `limit` at a time until its items are older
 * than `since`: what was added since, with what other files added meanwhile.
 */
async function newestSince(path: string, since: string, limit: number) {
  const items: Array<Record<string, any>> = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page: Page = await api.admin('GET', `${path}${path.includes('?') ? '&' : '?'}limit=${limit}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
    expect(page.status).toBe(200);
    expect(page.body.items.length).toBeLessThanOrEqual(limit);
    items.push(...page.body.items);
    cursor = page.body.next_cursor;
    pages++;
  } while (cursor !== null && pages < 200 && (items.length === 0 || (items.at(-1)?.created_at as string) >= since));
  return { items: items.filter((item) => (item.created_at as string) >= since), pages };
}

/** The platform-wide keys issued since `since`, walked `limit` at a time. */
async function platformKeysSince(since: string, limit: number) {
  const { items, pages } = await newestSince('/admin/api-keys', since, limit);
  return { items, ids: items.map((item) => item.key_id as string), pages };
}

/** Audit events of `type` that concern no partner (a platform-wide key's), recorded since `since`, about `resourceId`. */
async function platformEvents(type: string, resourceId: string, since: string) {
  const { items } = await newestSince(`/admin/audit-events?type=${type}`, since, 200);
  return items.filter((event) => event.resource_id === resourceId);
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** Two partners, each with a merchant of the same (new) `client_id`: what only this test's lists hold. */
async function twoPartnersOneMerchantId() {
  const clientId = `merchant-${randomUUID().slice(0, 12)}`;
  const a = await api.createPartner();
  const b = await api.createPartner();
  await api.createClient(a, { client_id: clientId });
  await api.createClient(b, { client_id: clientId });
  return { a, b, clientId };
}

/** The admin's audit events of `type` for a partner. */
async function auditEventsOf(partnerId: string, type: string) {
  const response = await api.admin('GET', `/admin/audit-events?partner_id=${partnerId}&type=${type}`);
  expect(response.status).toBe(200);
  return response.body.items as Array<Record<string, any>>;
}

describe('admin access to the console routes', () => {
  const consoleRoutes: Array<[string, string]> = [
    ['GET', '/admin/partners/ptr_x/api-keys'],
    ['GET', '/admin/api-keys'],
    ['GET', '/admin/transactions'],
    ['GET', '/admin/transactions/svc_tx_x'],
    ['GET', '/admin/settlements'],
    ['POST', '/admin/settlements/run'],
    ['POST', '/admin/settlements/batch_x/pay'],
    ['GET', '/admin/settlements/batch_x/report.csv'],
  ];

  it.each(consoleRoutes)('%s %s: 401 ADMIN_TOKEN_INVALID without a token, 403 ADMIN_FORBIDDEN without the admin role', async (method, path) => {
    const support = await issueLocalAdminToken(config, { role: 'support' });

    const anonymous = await api.request(method, path);
    const forbidden = await api.admin(method, path, undefined, support);

    expect([anonymous.status, anonymous.body.code]).toEqual([401, 'ADMIN_TOKEN_INVALID']);
    expect([forbidden.status, forbidden.body.code]).toEqual([403, 'ADMIN_FORBIDDEN']);
  });

  it('refuses partner and platform API keys on every /admin route, as a header or as a bearer token (401 ADMIN_TOKEN_INVALID)', async () => {
    // Arrange
    const partner = await api.createPartner();
    const platform = await api.createPlatformKey();
    const adminRoutes = routes.filter((route) => route.path.startsWith(`${API_PREFIX}/admin/`) && route.method !== 'OPTIONS');
    const sends = (method: string) => method === 'POST' || method === 'PATCH';
    const presentations = (key: string): Array<Record<string, string>> => [{ 'x-api-key': key }, { authorization: `Bearer ${key}` }];

    // Act
    const answers = await Promise.all(
      adminRoutes.flatMap((route) => {
        const path = route.path.slice(API_PREFIX.length).replace(/\{[a-z_]+\}/g, partner.partnerId);
        const body = sends(route.method) ? { body: JSON.stringify({ scope: 'partner', name: 'x', service_fee_percentage: 0 }) } : {};
        return [partner.apiKey, platform.apiKey].flatMap((key) =>
          presentations(key).map(async (headers) => {
            const answer = await api.request(route.method, path, { headers: { ...headers, 'content-type': 'application/json' }, ...body });
            return `${route.method} ${route.path} ${answer.status} ${route.method === 'HEAD' ? 'ADMIN_TOKEN_INVALID' : answer.body.code}`;
          }),
        );
      }),
    );

    // Assert
    expect(adminRoutes.length).toBeGreaterThanOrEqual(20);
    expect(answers.filter((answer) => !answer.endsWith(' 401 ADMIN_TOKEN_INVALID'))).toEqual([]);
  }, TEST_TIMEOUT_MS);
});

describe('GET /admin/partners/{partner_id}/api-keys', () => {
  it('lists the partner`s keys newest first, paged, without key or secret; a revoked key is no longer listed', async () => {
    // Arrange: the partner's first key, then two more; a platform key, which is no partner's
    const partner = await api.createPartner();
    const issued = [partner.keyId];
    for (let i = 0; i < 2; i++) issued.push((await api.admin('POST', `/admin/partners/${partner.partnerId}/api-keys`, { scope: 'partner' })).body.key_id);
    await api.createPlatformKey();
    const path = `/admin/partners/${partner.partnerId}/api-keys`;

    // Act
    const first = await api.admin('GET', `${path}?limit=2`);
    const walked = await walk(`${path}?limit=2`, (item) => item.key_id);
    const revoked = await api.admin('DELETE', `/admin/api-keys/${issued[1]}`);
    const after = await api.admin('GET', path);

    // Assert
    // Exactly these fields: no key, hash or secret.
    expect(first.body.items).toEqual(
      issued.slice(1).reverse().map((keyId) => ({ key_id: keyId, scope: 'partner', partner_id: partner.partnerId, created_at: expect.any(String) })),
    );
    expect(walked).toEqual({ ids: [...issued].reverse(), pages: 2 });
    expect(revoked.status).toBe(204);
    expect(after.body).toEqual({ items: [expect.objectContaining({ key_id: issued[2] }), expect.objectContaining({ key_id: issued[0] })], next_cursor: null });
  }, TEST_TIMEOUT_MS);

  it('answers 404 PARTNER_NOT_FOUND for an unknown partner, and 400 for a cursor of another partner`s list', async () => {
    const partner = await api.createPartner();
    const other = await api.createPartner();
    await api.admin('POST', `/admin/partners/${other.partnerId}/api-keys`, { scope: 'partner' });
    const otherCursor = (await api.admin('GET', `/admin/partners/${other.partnerId}/api-keys?limit=1`)).body.next_cursor as string;

    const unknown = await api.admin('GET', '/admin/partners/ptr_00000000000000000000000000/api-keys');
    const foreignCursor = await api.admin('GET', `/admin/partners/${partner.partnerId}/api-keys?limit=1&cursor=${encodeURIComponent(otherCursor)}`);

    expect([unknown.status, unknown.body.code]).toEqual([404, 'PARTNER_NOT_FOUND']);
    expect([foreignCursor.status, foreignCursor.body.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect(foreignCursor.body.details.fieldErrors.cursor).toBeDefined();
  }, TEST_TIMEOUT_MS);
});

describe('GET /admin/api-keys', () => {
  it('lists the platform-wide keys newest first, paged, without key or secret and without any partner`s key; a revoked key is no longer listed', async () => {
    // Arrange: three platform keys, a partner (and its key) issued between the first two
    const since = new Date().toISOString();
    const issued = [(await api.createPlatformKey()).keyId];
    const partner = await api.createPartner();
    for (let i = 0; i < 2; i++) issued.push((await api.createPlatformKey()).keyId);
    const mine = (ids: string[]) => ids.filter((id) => issued.includes(id));

    // Act
    const first = await api.admin('GET', '/admin/api-keys?limit=1');
    const walked = await platformKeysSince(since, 2);
    const revoked = await api.admin('DELETE', `/admin/api-keys/${issued[1]}`);
    const after = await platformKeysSince(since, 200);

    // Assert
    // Exactly these fields: no key, hash, secret or partner. Other test files issue platform keys too: only this test's are compared.
    expect(first.body.items).toEqual([{ key_id: expect.stringMatching(/^key_/), scope: 'platform', created_at: expect.any(String) }]);
    expect(mine(walked.ids)).toEqual([...issued].reverse());
    expect(walked.pages).toBeGreaterThanOrEqual(2);
    expect(new Set(walked.ids).size).toBe(walked.ids.length);
    expect(walked.items.every((item) => item.scope === 'platform' && !('partner_id' in item))).toBe(true);
    expect(walked.ids).not.toContain(partner.keyId);
    expect(revoked.status).toBe(204);
    expect(mine(after.ids)).toEqual([issued[2], issued[0]]);
  }, TEST_TIMEOUT_MS);

  it('answers 400 for a cursor of another list (a partner`s keys) or a limit out of range, and refuses API keys (401)', async () => {
    // Arrange: a cursor of each key list
    const partner = await api.createPartner();
    await api.admin('POST', `/admin/partners/${partner.partnerId}/api-keys`, { scope: 'partner' });
    const platform = await api.createPlatformKey();
    await api.createPlatformKey();
    const partnerCursor = (await api.admin('GET', `/admin/partners/${partner.partnerId}/api-keys?limit=1`)).body.next_cursor as string;
    const platformCursor = (await api.admin('GET', '/admin/api-keys?limit=1')).body.next_cursor as string;

    // Act
    const partnerCursorHere = await api.admin('GET', `/admin/api-keys?limit=1&cursor=${encodeURIComponent(partnerCursor)}`);
    const platformCursorThere = await api.admin('GET', `/admin/partners/${partner.partnerId}/api-keys?limit=1&cursor=${encodeURIComponent(platformCursor)}`);
    const tooMany = await api.admin('GET', '/admin/api-keys?limit=201');
    const asPartner = await api.read(partner, '/admin/api-keys');
    const asPlatform = await api.request('GET', '/admin/api-keys', { headers: { authorization: `Bearer ${platform.apiKey}` } });

    // Assert
    for (const refused of [partnerCursorHere, platformCursorThere]) {
      expect([refused.status, refused.body.code, refused.body.details.fieldErrors.cursor]).toEqual([400, 'VALIDATION_ERROR', [expect.any(String)]]);
    }
    expect([tooMany.status, tooMany.body.details.fieldErrors.limit]).toEqual([400, [expect.any(String)]]);
    expect([asPartner.status, asPartner.body.code]).toEqual([401, 'ADMIN_TOKEN_INVALID']);
    expect([asPlatform.status, asPlatform.body.code]).toEqual([401, 'ADMIN_TOKEN_INVALID']);
  }, TEST_TIMEOUT_MS);
});

describe('GET /admin/transactions and /admin/transactions/{svc_tx_id}', () => {
  let a: PartnerCredentials;
  let b: PartnerCredentials;
  let clientId: string;
  /** Oldest first: A pending, A succeeded, B failed, A pending, B succeeded; one second apart, an hour ago. */
  const created: Transaction[] = [];
  const anHourAgo = Date.now() - 3_600_000;
  const at = (i: number) => new Date(anHourAgo + i * 1_000).toISOString();

  beforeAll(async () => {
    ({ a, b, clientId } = await twoPartnersOneMerchantId());
    const plan: Array<[PartnerCredentials, FinalStatus]> = [[a, 'pending'], [a, 'succeeded'], [b, 'failed'], [a, 'pending'], [b, 'succeeded']];
    for (const [i, [partner, status]] of plan.entries()) {
      created.push(await transactionIn(api, { partnerId: partner.partnerId, clientId }, { amountMinor: 1000 + i, currency: 'USD' }, { status, createdAt: at(i) }));
    }
  }, TEST_TIMEOUT_MS);

  const ids = (...indexes: number[]) => indexes.map((i) => created[i]?.svcTxId);

  it('searches across partners newest first, paging with limit and cursor, each item the Transaction resource of GET /transactions', async () => {
    const walked = await walk(`/admin/transactions?client_id=${clientId}&limit=2`, byTxId);
    const first = await api.admin('GET', `/admin/transactions?client_id=${clientId}&limit=1`);
    const asPartnerSees = await api.read(a, `/transactions/${created[3]?.svcTxId}`);

    expect(walked).toEqual({ ids: ids(4, 3, 2, 1, 0), pages: 3 });
    expect(first.body.items).toEqual([expect.objectContaining({ svcTxId: created[4]?.svcTxId, partnerId: b.partnerId, status: 'succeeded', amount: 10.04 })]);
    expect((await api.admin('GET', `/admin/transactions?client_id=${clientId}&partner_id=${a.partnerId}&limit=1`)).body.items).toEqual([asPartnerSees.body]);
  }, TEST_TIMEOUT_MS);

  it('filters by partner_id, status, partner_reference and the created range, combined', async () => {
    const scope = `/admin/transactions?client_id=${clientId}`;

    const ofA = await walk(`${scope}&partner_id=${a.partnerId}&limit=1`, byTxId);
    const pendingOfA = await walk(`${scope}&partner_id=${a.partnerId}&status=pending`, byTxId);
    const succeeded = await walk(`${scope}&status=succeeded`, byTxId);
    const byReference = await walk(`/admin/transactions?partner_reference=${created[2]?.partnerReference}&created_from=${encodeURIComponent(at(0))}`, byTxId);
    const range = await walk(`${scope}&created_from=${encodeURIComponent(at(1))}&created_to=${encodeURIComponent(at(3))}`, byTxId);
    const badRange = await api.admin('GET', `${scope}&created_from=${encodeURIComponent(at(3))}&created_to=${encodeURIComponent(at(1))}`);

    expect(ofA).toEqual({ ids: ids(3, 1, 0), pages: 3 });
    expect(pendingOfA.ids).toEqual(ids(3, 0));
    expect(succeeded.ids).toEqual(ids(4, 1));
    expect(byReference.ids).toEqual(ids(2));
    expect(range.ids).toEqual(ids(3, 2, 1));
    expect([badRange.status, badRange.body.details?.fieldErrors?.created_to]).toEqual([400, ['Must not be before created_from']]);
  }, TEST_TIMEOUT_MS);

  it('finds one transaction by svc_tx_id, the other filters still applied; a cursor of another query is 400', async () => {
    const tx = created[2] as Transaction; // B's, failed
    const otherCursor = (await api.admin('GET', `/admin/transactions?client_id=${clientId}&limit=1`)).body.next_cursor as string;

    const found = await api.admin('GET', `/admin/transactions?svc_tx_id=${tx.svcTxId}`);
    const withMatchingFilters = await api.admin('GET', `/admin/transactions?svc_tx_id=${tx.svcTxId}&partner_id=${b.partnerId}&status=failed&created_from=${encodeURIComponent(at(2))}`);
    const ofAnotherPartner = await api.admin('GET', `/admin/transactions?svc_tx_id=${tx.svcTxId}&partner_id=${a.partnerId}`);
    const ofAnotherStatus = await api.admin('GET', `/admin/transactions?svc_tx_id=${tx.svcTxId}&status=succeeded`);
    const createdLater = await api.admin('GET', `/admin/transactions?svc_tx_id=${tx.svcTxId}&created_from=${encodeURIComponent(at(3))}`);
    const unknown = await api.admin('GET', '/admin/transactions?svc_tx_id=svc_tx_00000000000000000000000000');
    const foreignCursor = await api.admin('GET', `/admin/transactions?svc_tx_id=${tx.svcTxId}&cursor=${encodeURIComponent(otherCursor)}`);

    expect(found.body).toEqual({ items: [expect.objectContaining({ svcTxId: tx.svcTxId, partnerId: b.partnerId, status: 'failed' })], next_cursor: null });
    expect(withMatchingFilters.body.items.map(byTxId)).toEqual([tx.svcTxId]);
    for (const empty of [ofAnotherPartner, ofAnotherStatus, createdLater, unknown]) expect([empty.status, empty.body]).toEqual([200, { items: [], next_cursor: null }]);
    expect([foreignCursor.status, foreignCursor.body.code]).toEqual([400, 'VALIDATION_ERROR']);
  }, TEST_TIMEOUT_MS);

  it('reads one transaction of any partner, as the partner reads it; an unknown one is 404 TX_NOT_FOUND', async () => {
    const ofA = await api.admin('GET', `/admin/transactions/${created[1]?.svcTxId}`);
    const ofB = await api.admin('GET', `/admin/transactions/${created[4]?.svcTxId}`);
    const unknown = await api.admin('GET', '/admin/transactions/svc_tx_00000000000000000000000000');

    expect(ofA.body).toEqual((await api.read(a, `/transactions/${created[1]?.svcTxId}`)).body);
    expect(ofB.body).toEqual((await api.read(b, `/transactions/${created[4]?.svcTxId}`)).body);
    expect([unknown.status, unknown.body.code]).toEqual([404, 'TX_NOT_FOUND']);
  }, TEST_TIMEOUT_MS);
});

describe('admin settlement: run, list, pay, report', () => {
  const run = (query: string) => api.admin('POST', `/admin/settlements/run${query}`);
  const pay = (batchId: string) => api.admin('POST', `/admin/settlements/${batchId}/pay`);

  /** Succeeded transactions of yesterday: two per currency of the partner's merchant. */
  async function eligible(partner: PartnerCredentials, clientId: string, currencies: string[]) {
    for (const currency of currencies) {
      for (let i = 0; i < 2; i++) await transactionIn(api, { partnerId: partner.partnerId, clientId }, { amountMinor: 2500 + i, currency }, { createdAt: yesterday() });
    }
  }

  /** A fresh partner's one pending batch, in `currency`, made by an admin's run. */
  async function oneBatch(currency: string) {
    const partner = await api.createPartner();
    await eligible(partner, await api.createClient(partner), [currency]);
    const [batch] = (await run(`?partner_id=${partner.partnerId}`)).body.batches;
    return { partner, batch };
  }

  it('runs one partner as POST /settlements/run does, records the run in the audit log, and lists across partners with paging and filters', async () => {
    // Arrange
    const { a, b, clientId } = await twoPartnersOneMerchantId();
    await eligible(a, clientId, ['GBP', 'EUR', 'JPY']);
    await eligible(b, clientId, ['USD']);

    // Act
    const ranA = await run(`?partner_id=${a.partnerId}&client_id=${clientId}`);
    const ranB = await run(`?partner_id=${b.partnerId}`);
    const again = await run(`?partner_id=${a.partnerId}`);
    const unknown = await run('?partner_id=ptr_00000000000000000000000000');
    const paid = await pay(ranB.body.batches[0].id);
    const walked = await walk(`/admin/settlements?client_id=${clientId}&limit=2`, byId);
    const ofA = await walk(`/admin/settlements?partner_id=${a.partnerId}&limit=2`, byId);
    const sent = await walk(`/admin/settlements?client_id=${clientId}&status=sent`, byId);
    const asPlatform = await api.read(await api.createPlatformKey(), `/settlements?partner_id=${a.partnerId}&limit=1`);
    const runEvents = await auditEventsOf(a.partnerId, 'settlement_run.requested');

    // Assert
    expect(ranA.status).toBe(200);
    expect(ranA.body.created_batches).toBe(3);
    expect(ranA.body.batches.map((batch: { currency: string }) => batch.currency).sort()).toEqual(['EUR', 'GBP', 'JPY']);
    expect(ranA.body.batches.every((batch: Record<string, unknown>) => batch.partnerId === a.partnerId && batch.status === 'pending')).toBe(true);
    expect(again.body).toEqual({ created_batches: 0, batches: [], continuing: false });
    expect([unknown.status, unknown.body.code]).toEqual([404, 'PARTNER_NOT_FOUND']);
    expect(paid.status).toBe(200);
    expect(walked.pages).toBe(2);
    expect(walked.ids.sort()).toEqual([...ranA.body.batches, ...ranB.body.batches].map(byId).sort());
    expect(ofA.ids.sort()).toEqual(ranA.body.batches.map(byId).sort());
    expect(sent.ids).toEqual([ranB.body.batches[0].id]);
    expect((await api.admin('GET', `/admin/settlements?partner_id=${a.partnerId}&limit=1`)).body.items).toEqual(asPlatform.body.items);
    // Newest first: the second run of A (every merchant), then the first (one merchant); the unknown partner's none.
    expect(runEvents).toEqual([
      expect.objectContaining({ partner_id: a.partnerId, resource_type: 'settlement_run', details: { admin: 'local-admin', client_id: null } }),
      expect.objectContaining({ partner_id: a.partnerId, resource_type: 'settlement_run', details: { admin: 'local-admin', client_id: clientId } }),
    ]);
    expect(runEvents.map((event) => event.resource_id)).toEqual([expect.stringMatching(/^run_/), expect.stringMatching(/^run_/)]);
  }, TEST_TIMEOUT_MS);

  it('pays a batch once when paid twice at once: one rail transfer, the other answer a 409 as the partner route gives; audited once', async () => {
    // Arrange
    const { partner, batch } = await oneBatch('GBP');

    // Act
    const answers = await Promise.all([pay(batch.id), pay(batch.id)]);
    const againAsAdmin = await pay(batch.id);
    const againAsPartner = await api.request('POST', '/settlements/pay', {
      headers: { 'x-api-key': partner.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ settlement_batch_id: batch.id }),
    });

    // Assert
    const [won, lost] = [...answers].sort((x, y) => x.status - y.status);
    expect(won?.status).toBe(200);
    expect(won?.body).toMatchObject({ id: batch.id, status: 'sent', railATransferId: expect.any(String), railBTransferId: null });
    expect(lost?.status).toBe(409);
    expect(['BATCH_PAYOUT_IN_PROGRESS', 'BATCH_ALREADY_PAID']).toContain(lost?.body.code);
    expect(await railTransfers('a', batch.id)).toEqual([expect.objectContaining({ transfer_id: won?.body.railATransferId, status: 'paid' })]);
    expect([againAsAdmin.status, againAsAdmin.body]).toEqual([againAsPartner.status, againAsPartner.body]);
    expect(againAsAdmin.body.code).toBe('BATCH_ALREADY_PAID');
    expect(await auditEventsOf(partner.partnerId, 'settlement_batch.payout_started')).toEqual([
      expect.objectContaining({ resource_type: 'settlement_batch', resource_id: batch.id, details: { admin: 'local-admin', currency: 'GBP', total_net: batch.totalNet } }),
    ]);
  }, TEST_TIMEOUT_MS);

  it('answers the same CSV report as the partner route, and 404 BATCH_NOT_FOUND for an unknown batch to pay or report', async () => {
    const { partner, batch } = await oneBatch('EUR');

    const report = await api.admin('GET', `/admin/settlements/${batch.id}/report.csv`);
    const partnerReport = await api.read(partner, `/settlements/${batch.id}/report.csv`);
    const unknownReport = await api.admin('GET', `/admin/settlements/${randomUUID()}/report.csv`);
    const unknownPay = await pay(randomUUID());

    expect(report.status).toBe(200);
    expect(report.body).toBe(partnerReport.body);
    expect(report.body).toMatch(/^type,svc_tx_id,partner_reference,created_at,currency,gross,processor_fee,platform_fee,net\r\n/);
    expect(report.headers.get('content-type')).toBe(partnerReport.headers.get('content-type'));
    expect(report.headers.get('content-disposition')).toBe(`attachment; filename="settlement-${batch.id}.csv"`);
    expect([unknownReport.status, unknownReport.body.code]).toEqual([404, 'BATCH_NOT_FOUND']);
    expect([unknownPay.status, unknownPay.body.code]).toEqual([404, 'BATCH_NOT_FOUND']);
    expect(await auditEventsOf(partner.partnerId, 'settlement_batch.payout_started')).toEqual([]);
  }, TEST_TIMEOUT_MS);
});

describe('audit events of admin changes: partners and API keys', () => {
  /** An unknown partner id, of the real id shape. */
  const unknownPartnerId = () => `ptr_${randomUUID().replace(/-/g, '').slice(0, 26)}`;

  it('records a partner created and each update: who, the fields set, each as set and as it was; a refused update records nothing', async () => {
    // Arrange: an admin token of another subject
    const ops = await issueLocalAdminToken(config, { subject: 'ops-alice' });
    const unknown = unknownPartnerId();

    // Act
    const created = await api.admin('POST', '/admin/partners', { name: 'Audited Ltd', service_fee_percentage: 2.5 }, ops);
    const id = created.body.partner_id as string;
    const suspended = await api.admin('PATCH', `/admin/partners/${id}`, { status: 'suspended' }, ops);
    const reactivated = await api.admin('PATCH', `/admin/partners/${id}`, { status: 'active', kyc_status: 'approved', service_fee_percentage: 3, rate_limit_per_minute: 120 }, ops);
    const branded = await api.admin('PATCH', `/admin/partners/${id}`, {
      branding: { display_name: 'Audited', logo_url: 'https://cdn.example.com/a/logo.png?token=s3cr3t-token#top', brand_color: '#1a2b3c' },
    });
    const invalid = await api.admin('PATCH', `/admin/partners/${id}`, { status: 'deleted' });
    const ofUnknown = await api.admin('PATCH', `/admin/partners/${unknown}`, { status: 'suspended' });
    const events = await allItems(`/admin/audit-events?partner_id=${id}`);

    // Assert
    expect([created.status, suspended.status, reactivated.status, branded.status, invalid.status, ofUnknown.status]).toEqual([201, 200, 200, 200, 400, 404]);
    expect(events.map((event) => event.type)).toEqual(['partner.updated', 'partner.updated', 'partner.updated', 'partner.created']);
    expect(events[3]).toEqual({
      id: expect.stringMatching(/^aud_/),
      type: 'partner.created',
      partner_id: id,
      resource_type: 'partner',
      resource_id: id,
      details: { admin: 'ops-alice', name: 'Audited Ltd', status: 'active', kyc_status: 'pending', service_fee_percentage: 2.5, rate_limit_per_minute: null, branding: null },
      created_at: created.body.created_at,
    });
    expect(events[2]).toMatchObject({ resource_type: 'partner', resource_id: id, created_at: suspended.body.updated_at });
    expect(events[2]?.details).toEqual({ admin: 'ops-alice', fields: 'status', status: 'suspended', status_before: 'active' });
    expect(events[1]?.details).toEqual({
      admin: 'ops-alice',
      fields: 'status,kyc_status,service_fee_percentage,rate_limit_per_minute',
      status: 'active',
      status_before: 'suspended',
      kyc_status: 'approved',
      kyc_status_before: 'pending',
      service_fee_percentage: 3,
      service_fee_percentage_before: 2.5,
      rate_limit_per_minute: 120,
      rate_limit_per_minute_before: null,
    });
    // The logo URL without its query or fragment (a signed link's token is a secret).
    expect(events[0]?.details).toEqual({
      admin: 'local-admin',
      fields: 'branding',
      branding_display_name: 'Audited',
      branding_logo_url: 'https://cdn.example.com/a/logo.png',
      branding_brand_color: '#1a2b3c',
      branding_before: null,
    });
    expect(JSON.stringify(events)).not.toContain('s3cr3t');
    expect(await allItems(`/admin/audit-events?partner_id=${unknown}`)).toEqual([]);
  }, TEST_TIMEOUT_MS);

  it('applies two concurrent updates of one partner both, each recorded with the value it replaced', async () => {
    // Arrange
    const partner = await api.createPartner();

    // Act
    const answers = await Promise.all([
      api.admin('PATCH', `/admin/partners/${partner.partnerId}`, { service_fee_percentage: 4 }),
      api.admin('PATCH', `/admin/partners/${partner.partnerId}`, { rate_limit_per_minute: 99 }),
    ]);
    const now = await api.admin('GET', `/admin/partners/${partner.partnerId}`);
    const updates = await allItems(`/admin/audit-events?partner_id=${partner.partnerId}&type=partner.updated`);

    // Assert
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    expect(now.body).toMatchObject({ service_fee_percentage: 4, rate_limit_per_minute: 99 });
    expect(updates.map((event) => event.details).sort((x, y) => String(x.fields).localeCompare(String(y.fields)))).toEqual([
      { admin: 'local-admin', fields: 'rate_limit_per_minute', rate_limit_per_minute: 99, rate_limit_per_minute_before: null },
      { admin: 'local-admin', fields: 'service_fee_percentage', service_fee_percentage: 4, service_fee_percentage_before: 1.5 },
    ]);
    // One of the answers shows both changes: it was applied to the partner the other had changed.
    expect(answers.some((answer) => answer.body.service_fee_percentage === 4 && answer.body.rate_limit_per_minute === 99)).toBe(true);
  }, TEST_TIMEOUT_MS);

  it('applies 20 concurrent renames of one partner all, one after another: each audit event replaced the name the one before it set', async () => {
    // Arrange
    const partner = await api.createPartner();
    const original = (await api.admin('GET', `/admin/partners/${partner.partnerId}`)).body.name as string;
    const names = Array.from({ length: 20 }, (_, i) => `Renamed ${i} ${randomUUID().slice(0, 6)}`);

    // Act
    const answers = await Promise.all(names.map((name) => api.admin('PATCH', `/admin/partners/${partner.partnerId}`, { name })));
    const now = await api.admin('GET', `/admin/partners/${partner.partnerId}`);
    const renames = (await allItems(`/admin/audit-events?partner_id=${partner.partnerId}&type=partner.updated`)).map((event) => event.details as { name: string; name_before: string });

    // Assert: every rename applied once, and they form one chain from the original name to the final one
    expect(answers.map((answer) => answer.status)).toEqual(names.map(() => 200));
    expect(renames.map((rename) => rename.name).sort()).toEqual([...names].sort());
    const after = new Map(renames.map((rename) => [rename.name_before, rename.name]));
    const chain = [original];
    while (after.has(chain.at(-1)!)) chain.push(after.get(chain.at(-1)!)!);
    expect({ length: chain.length, last: chain.at(-1) }).toEqual({ length: 21, last: now.body.name });
  }, TEST_TIMEOUT_MS);

  it('records each API key issued, partner-scoped or platform-wide, with its id and scope and never the key, its hash or its secret; a refused issue records nothing', async () => {
    // Arrange
    const since = new Date().toISOString();
    const unknown = unknownPartnerId();

    // Act
    const partner = await api.createPartner();
    const platform = await api.createPlatformKey();
    const refused = await api.admin('POST', `/admin/partners/${unknown}/api-keys`, { scope: 'partner' });
    const ofPartner = await allItems(`/admin/audit-events?partner_id=${partner.partnerId}&type=api_key.created`);
    const ofPlatform = await platformEvents('api_key.created', platform.keyId, since);

    // Assert
    expect(ofPartner).toEqual([
      {
        id: expect.stringMatching(/^aud_/),
        type: 'api_key.created',
        partner_id: partner.partnerId,
        resource_type: 'api_key',
        resource_id: partner.keyId,
        details: { admin: 'local-admin', scope: 'partner' },
        created_at: expect.any(String),
      },
    ]);
    expect(ofPlatform).toEqual([expect.objectContaining({ partner_id: null, resource_type: 'api_key', details: { admin: 'local-admin', scope: 'platform' } })]);
    expect([refused.status, refused.body.code]).toEqual([404, 'PARTNER_NOT_FOUND']);
    expect(await allItems(`/admin/audit-events?partner_id=${unknown}`)).toEqual([]);
    const logged = JSON.stringify([...ofPartner, ...ofPlatform]);
    for (const secret of [partner.apiKey, partner.hmacSecret, sha256(partner.apiKey), platform.apiKey, platform.hmacSecret, sha256(platform.apiKey)]) {
      expect(logged).not.toContain(secret);
    }
  }, TEST_TIMEOUT_MS);

  it('records a revocation once, under the key`s partner (a platform key`s under none); a refused revocation records nothing', async () => {
    // Arrange
    const since = new Date().toISOString();
    const partner = await api.createPartner();
    const platform = await api.createPlatformKey();

    // Act: the partner's key revoked twice at once; the platform key twice, one after the other
    const concurrent = await Promise.all([api.admin('DELETE', `/admin/api-keys/${partner.keyId}`), api.admin('DELETE', `/admin/api-keys/${partner.keyId}`)]);
    const platformRevoked = await api.admin('DELETE', `/admin/api-keys/${platform.keyId}`);
    const again = await api.admin('DELETE', `/admin/api-keys/${platform.keyId}`);
    const keyAfter = await api.read(partner, '/clients');

    // Assert
    expect(concurrent.map((answer) => answer.status).sort()).toEqual([204, 404]);
    expect([platformRevoked.status, again.status, again.body.code]).toEqual([204, 404, 'API_KEY_NOT_FOUND']);
    expect([keyAfter.status, keyAfter.body.code]).toEqual([401, 'API_KEY_INVALID']);
    expect(await allItems(`/admin/audit-events?partner_id=${partner.partnerId}&type=api_key.revoked`)).toEqual([
      expect.objectContaining({ partner_id: partner.partnerId, resource_type: 'api_key', resource_id: partner.keyId, details: { admin: 'local-admin', scope: 'partner' } }),
    ]);
    expect(await platformEvents('api_key.revoked', platform.keyId, since)).toEqual([
      expect.objectContaining({ partner_id: null, resource_type: 'api_key', details: { admin: 'local-admin', scope: 'platform' } }),
    ]);
  }, TEST_TIMEOUT_MS);
});
