/**
 * Settlement over HTTP (the local API, the same handlers as AWS) against DynamoDB Local and the sandbox rails:
 * POST /settlements/run, GET /settlements, POST /settlements/pay (interface-spec.md; decisions.md §5, §7, §9).
 * Transactions reach `succeeded` the production way: the processor's signed event.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { usePartnerSuite, type PartnerCredentials } from '../../support/api';
import { chargeBack, failNextPayout, inParallel, railTransfers, refund, transactionIn, yesterday } from '../../support/settlement';
import type { Transaction } from '../../../lib/domain/transaction';

/** Each test brings its transactions to `succeeded` through the processor webhook, and runs with the rest of the suite. */
const TEST_TIMEOUT_MS = 60_000;

const suite = usePartnerSuite(); // service fee 1.5 %

const run = (credentials: Pick<PartnerCredentials, 'apiKey'>, query = '') =>
  suite.api.request('POST', `/settlements/run${query}`, { headers: { 'x-api-key': credentials.apiKey } });
const pay = (credentials: Pick<PartnerCredentials, 'apiKey'>, batchId: string) =>
  suite.api.request('POST', '/settlements/pay', {
    headers: { 'x-api-key': credentials.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ settlement_batch_id: batchId }),
  });
const readTx = (credentials: Pick<PartnerCredentials, 'apiKey'>, tx: Transaction) => suite.api.read(credentials, `/transactions/${tx.svcTxId}`);

/** A fresh partner with one or more clients, so each test's run sees only its own transactions. */
async function freshPartner(clients = 1): Promise<{ partner: PartnerCredentials; clientIds: string[] }> {
  const partner = await suite.api.createPartner();
  const clientIds = [];
  for (let i = 0; i < clients; i++) clientIds.push(await suite.api.createClient(partner));
  return { partner, clientIds };
}

/** One partner's balances (GET /balances, decisions.md §5a), of one client (one page: a client has a few currencies at most). */
const balancesOf = async (credentials: Pick<PartnerCredentials, 'apiKey'>, clientId: string) => {
  const response = await suite.api.read(credentials, `/balances?client_id=${encodeURIComponent(clientId)}`);
  expect(response.status).toBe(200);
  expect(response.body.next_cursor).toBeNull();
  return response.body.items as Array<Record<string, unknown>>;
};

/** Minor units of a major amount shown by the API (2 decimals unless told). */
const cents = (value: number, exponent = 2) => Math.round(value * 10 ** exponent);

/** Sum of a field over transactions as GET /transactions/{id} shows them, in minor units (exact). */
const sumMinor = (values: number[], exponent: number) => values.reduce((total, value) => total + Math.round(value * 10 ** exponent), 0);

describe('POST /settlements/run', () => {
  it('groups by client and currency, totals each batch exactly, leaves out pending, failed and today`s payments, and finds nothing new on a second run', async () => {
    const { partner, clientIds } = await freshPartner(2);
    const currencies = [
      { currency: 'USD', amounts: [1999, 501], exponent: 2 },
      { currency: 'EUR', amounts: [10_000, 33], exponent: 2 },
      { currency: 'JPY', amounts: [5000, 777], exponent: 0 },
    ];
    const eligible: Transaction[] = [];
    for (const clientId of clientIds) {
      for (const { currency, amounts } of currencies) {
        for (const amountMinor of amounts) eligible.push(await transactionIn(suite.api, { partnerId: partner.partnerId, clientId }, { amountMinor, currency }));
      }
    }
    const payee = { partnerId: partner.partnerId, clientId: clientIds[0] as string };
    const left = [
      await transactionIn(suite.api, payee, { amountMinor: 1000, currency: 'USD' }, { status: 'pending' }),
      await transactionIn(suite.api, payee, { amountMinor: 1000, currency: 'USD' }, { status: 'failed' }),
      // Succeeded, but today: after the day boundary.
      await transactionIn(suite.api, payee, { amountMinor: 1000, currency: 'USD' }, { createdAt: new Date().toISOString() }),
    ];

    const first = await run(partner);
    const second = await run(partner);

    expect(first.status).toBe(200);
    expect(first.body.created_batches).toBe(6);
    expect(first.body.batches).toHaveLength(6);
    const placed = first.body.batches.flatMap((batch: { transactionIds: string[] }) => batch.transactionIds);
    expect(placed.sort()).toEqual(eligible.map((tx) => tx.svcTxId).sort());
    for (const batch of first.body.batches) {
      const members = eligible.filter((tx) => batch.transactionIds.includes(tx.svcTxId));
      expect(members.every((tx) => tx.clientId === batch.clientId && tx.currency === batch.currency)).toBe(true);
      expect(batch).toMatchObject({ partnerId: partner.partnerId, status: 'pending', railATransferId: null, railBTransferId: null, adjustments: [] });
      expect(batch.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      const { exponent } = currencies.find((c) => c.currency === batch.currency) ?? { exponent: 2 };
      const shown = await Promise.all(members.map(async (tx) => (await readTx(partner, tx)).body));
      expect(shown.every((tx) => tx.settlementStatus === 'queued')).toBe(true);
      expect(Math.round(batch.totalGross * 10 ** exponent)).toBe(sumMinor(shown.map((tx) => tx.amount), exponent));
      expect(Math.round(batch.totalProcessorFees * 10 ** exponent)).toBe(sumMinor(shown.map((tx) => tx.processorFee), exponent));
      expect(Math.round(batch.totalPlatformFees * 10 ** exponent)).toBe(sumMinor(shown.map((tx) => tx.platformFee), exponent));
      expect(Math.round(batch.totalNet * 10 ** exponent)).toBe(sumMinor(shown.map((tx) => tx.netAmount), exponent));
    }
    for (const tx of left) expect((await readTx(partner, tx)).body.settlementStatus).toBe('unsettled');
    expect(second.status).toBe(200);
    expect(second.body).toEqual({ created_batches: 0, batches: [], continuing: false });
  }, TEST_TIMEOUT_MS);

  it('settles a group of 230 transactions in one batch (decisions.md §7), and 5 concurrent runs place each transaction in exactly one batch', async () => {
    const { partner, clientIds } = await freshPartner();
    const payee = { partnerId: partner.partnerId, clientId: clientIds[0] as string };
    const eligible = await inParallel(Array.from({ length: 230 }, (_, i) => 100 + i), 8, (amountMinor) =>
      transactionIn(suite.api, payee, { amountMinor, currency: 'EUR' }),
    );

    const runs = await Promise.all(Array.from({ length: 5 }, () => run(partner)));

    expect(runs.map((response) => response.status)).toEqual([200, 200, 200, 200, 200]);
    const batches = runs.flatMap((response) => response.body.batches);
    const placed: string[] = batches.flatMap((batch: { transactionIds: string[] }) => batch.transactionIds);
    expect(placed).toHaveLength(eligible.length);
    expect(new Set(placed)).toEqual(new Set(eligible.map((tx) => tx.svcTxId)));
    expect(batches).toHaveLength(1);
    expect(new Set(await Promise.all(eligible.map(async (tx) => (await readTx(partner, tx)).body.settlementStatus)))).toEqual(new Set(['queued']));
    const listed = await suite.api.read(partner, '/settlements?limit=200');
    expect(listed.body.items.map((batch: { id: string }) => batch.id).sort()).toEqual(batches.map((batch: { id: string }) => batch.id).sort());
  }, TEST_TIMEOUT_MS);

  it('acts only for the key`s own partner: another partner_id is 403; a platform key runs one named partner, and an unknown one is 404 (runs and lists)', async () => {
    const mine = await freshPartner();
    const other = await freshPartner();
    await transactionIn(suite.api, { partnerId: other.partner.partnerId, clientId: other.clientIds[0] as string }, { amountMinor: 1234, currency: 'GBP' });
    const platform = await suite.api.createPlatformKey();

    const forbidden = await run(mine.partner, `?partner_id=${other.partner.partnerId}`);
    const unknown = await run(platform, '?partner_id=ptr_00000000000000000000000000');
    const unknownList = await suite.api.request('GET', '/settlements?partner_id=ptr_00000000000000000000000000', { headers: { 'x-api-key': platform.apiKey } });
    const unknownBalances = await suite.api.request('GET', '/balances?partner_id=ptr_00000000000000000000000000', { headers: { 'x-api-key': platform.apiKey } });
    const named = await run(platform, `?partner_id=${other.partner.partnerId}&client_id=${other.clientIds[0]}`);

    expect(forbidden.status).toBe(403);
    expect(forbidden.body.code).toBe('API_KEY_SCOPE_FORBIDDEN');
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('PARTNER_NOT_FOUND');
    // The lists of an unknown partner too, not an empty page
    expect([unknownList.status, unknownList.body.code, unknownBalances.status, unknownBalances.body.code]).toEqual([404, 'PARTNER_NOT_FOUND', 404, 'PARTNER_NOT_FOUND']);
    expect(named.status).toBe(200);
    expect(named.body.created_batches).toBe(1);
    expect(named.body.batches[0]).toMatchObject({ partnerId: other.partner.partnerId, clientId: other.clientIds[0], currency: 'GBP', totalGross: 12.34 });
  }, TEST_TIMEOUT_MS);

  it('needs an API key (401 API_KEY_MISSING)', async () => {
    const response = await suite.api.request('POST', '/settlements/run');

    expect(response.status).toBe(401);
    expect(response.body.code).toBe('API_KEY_MISSING');
  }, TEST_TIMEOUT_MS);
});

describe('POST /settlements/pay', () => {
  /** A fresh partner's one pending batch in `currency`, of `count` succeeded transactions. */
  async function pendingBatch(currency: string, count = 2) {
    const { partner, clientIds } = await freshPartner();
    const payee = { partnerId: partner.partnerId, clientId: clientIds[0] as string };
    const transactions = [];
    for (let i = 0; i < count; i++) transactions.push(await transactionIn(suite.api, payee, { amountMinor: 2500 + i, currency }));
    const response = await run(partner);
    expect(response.body.created_batches).toBe(1);
    return { partner, payee, transactions, batch: response.body.batches[0] };
  }

  it('pays a GBP batch over rail A: sent, the transfer id set, every transaction paid, one transfer of totalNet at the rail', async () => {
    const { partner, transactions, batch } = await pendingBatch('GBP');

    const paid = await pay(partner, batch.id);

    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ id: batch.id, status: 'sent', railBTransferId: null, totalNet: batch.totalNet });
    expect(paid.body.railATransferId).toEqual(expect.any(String));
    for (const tx of transactions) expect((await readTx(partner, tx)).body.settlementStatus).toBe('paid');
    expect(await railTransfers('a', batch.id)).toEqual([
      { transfer_id: paid.body.railATransferId, batch_id: batch.id, amount: batch.totalNet, currency: 'GBP', status: 'paid' },
    ]);
    const listed = await suite.api.read(partner, '/settlements');
    expect(listed.body.items[0]).toMatchObject({ id: batch.id, status: 'sent', railATransferId: paid.body.railATransferId, railBTransferId: null });
  }, TEST_TIMEOUT_MS);

  it('pays a JPY batch over rail B', async () => {
    const { partner, batch } = await pendingBatch('JPY');

    const paid = await pay(partner, batch.id);

    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ status: 'sent', railATransferId: null });
    expect(await railTransfers('b', batch.id)).toEqual([expect.objectContaining({ transfer_id: paid.body.railBTransferId, status: 'paid', currency: 'JPY' })]);
    expect(await railTransfers('a', batch.id)).toEqual([]);
  }, TEST_TIMEOUT_MS);

  it('10 concurrent pays make one payout at the rail: one 200 sent, the other nine 409', async () => {
    const { partner, batch } = await pendingBatch('USD');

    const answers = await Promise.all(Array.from({ length: 10 }, () => pay(partner, batch.id)));

    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([200, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
    for (const answer of answers.filter((a) => a.status === 409)) {
      expect(['BATCH_PAYOUT_IN_PROGRESS', 'BATCH_ALREADY_PAID']).toContain(answer.body.code);
    }
    expect((await railTransfers('a', batch.id)).filter((transfer) => transfer.status === 'paid')).toHaveLength(1);
    expect(await railTransfers('a', batch.id)).toHaveLength(1);
    const again = await pay(partner, batch.id);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('BATCH_ALREADY_PAID');
  }, TEST_TIMEOUT_MS);

  it('answers 502 PAYOUT_FAILED when the rail fails: the batch failed, its transactions still queued; paid again it is sent, with one paid transfer', async () => {
    const { partner, transactions, batch } = await pendingBatch('EUR');
    await failNextPayout('a');

    const failed = await pay(partner, batch.id);
    const listedFailed = await suite.api.read(partner, '/settlements?status=failed');
    const queued = await readTx(partner, transactions[0] as Transaction);
    const retried = await pay(partner, batch.id);

    expect(failed.status).toBe(502);
    expect(failed.body.code).toBe('PAYOUT_FAILED');
    expect(listedFailed.body.items).toEqual([expect.objectContaining({ id: batch.id, status: 'failed', railATransferId: null })]);
    expect(queued.body.settlementStatus).toBe('queued');
    expect(retried.status).toBe(200);
    expect(retried.body.status).toBe('sent');
    const attempts = await railTransfers('a', batch.id);
    expect(attempts.map((attempt) => attempt.status)).toEqual(['failed', 'paid']);
    expect(retried.body.railATransferId).toBe(attempts[1]?.transfer_id);
    for (const tx of transactions) expect((await readTx(partner, tx)).body.settlementStatus).toBe('paid');
  }, TEST_TIMEOUT_MS);

  it('answers 404 BATCH_NOT_FOUND for an unknown id, a malformed one, and another partner`s batch (which a platform key may pay)', async () => {
    const { batch } = await pendingBatch('GBP', 1);
    const stranger = await freshPartner();
    const platform = await suite.api.createPlatformKey();

    const answers = [
      await pay(stranger.partner, '00000000-0000-4000-8000-000000000000'),
      await pay(stranger.partner, 'not a batch id'),
      await pay(stranger.partner, batch.id),
    ];
    const listedByStranger = await suite.api.read(stranger.partner, '/settlements');
    const byPlatform = await pay(platform, batch.id);

    for (const answer of answers) {
      expect(answer.status).toBe(404);
      expect(answer.body.code).toBe('BATCH_NOT_FOUND');
    }
    expect(listedByStranger.body.items).toEqual([]);
    expect(byPlatform.status).toBe(200);
  }, TEST_TIMEOUT_MS);

  it('holds the payout of a suspended partner or one whose KYC is not approved (403, nothing paid), and pays once reinstated', async () => {
    const { partner, batch } = await pendingBatch('GBP', 1);
    const setPartner = (fields: Record<string, unknown>) => suite.api.admin('PATCH', `/admin/partners/${partner.partnerId}`, fields);

    await setPartner({ status: 'suspended' });
    const suspended = await pay(partner, batch.id);
    await setPartner({ status: 'active', kyc_status: 'rejected' });
    const rejected = await pay(partner, batch.id);
    await setPartner({ kyc_status: 'approved' });
    const reinstated = await pay(partner, batch.id);

    expect([suspended.status, suspended.body.code]).toEqual([403, 'PARTNER_NOT_ACTIVE']);
    expect([rejected.status, rejected.body.code]).toEqual([403, 'KYC_NOT_APPROVED']);
    expect(reinstated.status).toBe(200);
    expect(await railTransfers('a', batch.id)).toEqual([expect.objectContaining({ status: 'paid' })]);
  }, TEST_TIMEOUT_MS);

  it('refuses a body without settlement_batch_id with 400 VALIDATION_ERROR', async () => {
    const { partner } = await freshPartner();

    const response = await suite.api.request('POST', '/settlements/pay', {
      headers: { 'x-api-key': partner.apiKey, 'content-type': 'application/json' },
      body: '{}',
    });

    expect(response.status).toBe(400);
    expect(response.body.code).toBe('VALIDATION_ERROR');
  }, TEST_TIMEOUT_MS);

  it('deducts a refund of a paid transaction from the client`s next batch as an adjustment, and the totals reconcile', async () => {
    const { partner, payee, transactions, batch } = await pendingBatch('USD');
    expect((await pay(partner, batch.id)).status).toBe(200);
    const refunded = transactions[0] as Transaction;
    await refund(suite.api, refunded);
    const refundedShown = (await readTx(partner, refunded)).body;
    const next = [
      await transactionIn(suite.api, payee, { amountMinor: 9000, currency: 'USD' }),
      await transactionIn(suite.api, payee, { amountMinor: 8000, currency: 'USD' }),
    ];

    const waiting = await balancesOf(partner, payee.clientId);
    const response = await run(partner);

    expect(refundedShown).toMatchObject({ status: 'refunded', settlementStatus: 'paid', refundedAmount: refundedShown.amount });
    // Before the run: the two sales wait, and the refund waits to be deducted from them
    const nextNet = sumMinor(await Promise.all(next.map(async (tx) => (await readTx(partner, tx)).body.netAmount)), 2);
    expect(waiting).toEqual([
      expect.objectContaining({
        client_id: payee.clientId,
        currency: 'USD',
        unsettled_net: nextNet / 100,
        waiting_reversals: refundedShown.netAmount,
        owed: 0,
        next_payout_estimate: (nextNet - cents(refundedShown.netAmount)) / 100,
      }),
    ]);
    expect(response.body.created_batches).toBe(1);
    const nextBatch = response.body.batches[0];
    expect(nextBatch.transactionIds.sort()).toEqual(next.map((tx) => tx.svcTxId).sort());
    expect(nextBatch.adjustments).toEqual([
      expect.objectContaining({
        svcTxId: refunded.svcTxId,
        type: 'refund',
        gross: -refundedShown.amount,
        processorFee: -refundedShown.processorFee,
        platformFee: -refundedShown.platformFee,
        net: -refundedShown.netAmount,
      }),
    ]);
    const shown = await Promise.all(next.map(async (tx) => (await readTx(partner, tx)).body));
    expect(Math.round(nextBatch.totalGross * 100)).toBe(sumMinor(shown.map((tx) => tx.amount), 2) - Math.round(refundedShown.amount * 100));
    expect(Math.round(nextBatch.totalNet * 100)).toBe(sumMinor(shown.map((tx) => tx.netAmount), 2) - Math.round(refundedShown.netAmount * 100));
    expect(Math.round(nextBatch.totalGross * 100)).toBe(
      Math.round(nextBatch.totalProcessorFees * 100) + Math.round(nextBatch.totalPlatformFees * 100) + Math.round(nextBatch.totalNet * 100),
    );
    const report = await fetch(`${suite.api.baseUrl}/settlements/${nextBatch.id}/report.csv`, { headers: { 'x-api-key': partner.apiKey } });
    expect(report.status).toBe(200);
    expect(report.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const rows = (await report.text()).split('\r\n');
    const money = (value: number) => value.toFixed(2);
    expect(rows[0]).toBe('type,svc_tx_id,partner_reference,created_at,currency,gross,processor_fee,platform_fee,net');
    expect(rows.filter((row) => row.startsWith('transaction,')).sort()).toEqual(
      shown.map((tx) => `transaction,${tx.svcTxId},${tx.partnerReference},${tx.createdAt},USD,${money(tx.amount)},${money(tx.processorFee)},${money(tx.platformFee)},${money(tx.netAmount)}`).sort(),
    );
    // One row per ledger entry (decisions.md §5a): the two sales, and the refund entry typed as what it is.
    expect(rows.filter((row) => row.startsWith('refund,'))).toEqual([
      `refund,${refunded.svcTxId},${refunded.partnerReference},${nextBatch.adjustments[0].createdAt},USD,${money(-refundedShown.amount)},${money(-refundedShown.processorFee)},${money(-refundedShown.platformFee)},${money(-refundedShown.netAmount)}`,
    ]);
    expect(rows.slice(1, -2).map((row) => row.split(',')[0]).sort()).toEqual(['refund', 'transaction', 'transaction']);
    expect(rows.at(-2)).toBe(
      `total,,,,USD,${money(nextBatch.totalGross)},${money(nextBatch.totalProcessorFees)},${money(nextBatch.totalPlatformFees)},${money(nextBatch.totalNet)}`,
    );
    expect(rows.at(-1)).toBe('');
    const strangers = await suite.api.read(suite.partner, `/settlements/${nextBatch.id}/report.csv`);
    expect(strangers.status).toBe(404);
    expect(strangers.body.code).toBe('BATCH_NOT_FOUND');

    const paid = await pay(partner, nextBatch.id);
    expect(paid.status).toBe(200);
    expect(await railTransfers('a', nextBatch.id)).toEqual([expect.objectContaining({ amount: nextBatch.totalNet, status: 'paid' })]);
    // The refund was deducted once: a further run finds nothing, and nothing waits.
    expect((await run(partner)).body.created_batches).toBe(0);
    expect(await balancesOf(partner, payee.clientId)).toEqual([]);
  }, TEST_TIMEOUT_MS);
});

describe('reversals after settlement (refunds and chargebacks as ledger entries, decisions.md §5a)', () => {
  /** The entry that reverses a whole payment as GET /transactions/{id} shows it: its split negated, as a batch lists it. */
  const minus = (value: number) => (value === 0 ? 0 : -value);
  const reversalOf = (shown: Record<string, any>, type: 'refund' | 'chargeback') => ({
    svcTxId: shown.svcTxId,
    type,
    gross: minus(shown.amount),
    processorFee: minus(shown.processorFee),
    platformFee: minus(shown.platformFee),
    net: minus(shown.netAmount),
    createdAt: expect.any(String),
  });

  it('no longer holds back the reversal of a payment whose batch is not paid yet: it is deducted from the next batch, and not again after that payout', async () => {
    const { partner, clientIds } = await freshPartner();
    const payee = { partnerId: partner.partnerId, clientId: clientIds[0] as string };
    const first = await transactionIn(suite.api, payee, { amountMinor: 5000, currency: 'EUR' });
    await transactionIn(suite.api, payee, { amountMinor: 7000, currency: 'EUR' });
    const [batch] = (await run(partner)).body.batches;
    await chargeBack(suite.api, first);
    const third = await transactionIn(suite.api, payee, { amountMinor: 9000, currency: 'EUR' });

    // The charged-back payment's batch is unpaid: its chargeback is deducted from the next batch all the same.
    const whileUnpaid = await run(partner);
    expect((await pay(partner, batch.id)).status).toBe(200);
    const fourth = await transactionIn(suite.api, payee, { amountMinor: 9500, currency: 'EUR' });
    const afterPayout = await run(partner);

    const firstShown = (await readTx(partner, first)).body;
    const thirdShown = (await readTx(partner, third)).body;
    expect(batch.transactionIds).toContain(first.svcTxId);
    expect(whileUnpaid.body.created_batches).toBe(1);
    expect(whileUnpaid.body.batches[0].transactionIds).toEqual([third.svcTxId]);
    expect(whileUnpaid.body.batches[0].adjustments).toEqual([reversalOf(firstShown, 'chargeback')]);
    expect(whileUnpaid.body.batches[0].adjustments[0].gross).toBe(-50);
    expect(cents(whileUnpaid.body.batches[0].totalNet)).toBe(cents(thirdShown.netAmount) - cents(firstShown.netAmount));
    expect(cents(whileUnpaid.body.batches[0].totalGross)).toBe(9000 - 5000);
    expect(afterPayout.body.created_batches).toBe(1);
    expect(afterPayout.body.batches[0].transactionIds).toEqual([fourth.svcTxId]);
    expect(afterPayout.body.batches[0].adjustments).toEqual([]);
    expect(firstShown).toMatchObject({ status: 'chargeback', settlementStatus: 'paid', disputedAmount: 50, disputeStatus: 'needs_response' });
  }, TEST_TIMEOUT_MS);

  it('makes no batch for a client whose waiting entries net exactly 0 (a refund of a paid payment as large as the new sale): nothing queued, nothing paid; a later sale settles them all', async () => {
    const { partner, clientIds } = await freshPartner();
    const payee = { partnerId: partner.partnerId, clientId: clientIds[0] as string };
    const refunded = await transactionIn(suite.api, payee, { amountMinor: 4200, currency: 'EUR' });
    const [first] = (await run(partner)).body.batches;
    expect((await pay(partner, first.id)).status).toBe(200);
    await refund(suite.api, refunded);
    const even = await transactionIn(suite.api, payee, { amountMinor: 4200, currency: 'EUR' });

    const evenRun = await run(partner);
    const evenBalances = await balancesOf(partner, payee.clientId);
    const evenShown = (await readTx(partner, even)).body;
    const later = await transactionIn(suite.api, payee, { amountMinor: 1000, currency: 'EUR' });
    const laterRun = await run(partner);

    // Nothing to pay: no batch (and so no rail call); the sale and the refund both wait
    expect(evenRun.status).toBe(200);
    expect(evenRun.body).toEqual({ created_batches: 0, batches: [], continuing: false });
    expect(evenShown.settlementStatus).toBe('unsettled');
    expect(evenBalances).toEqual([
      expect.objectContaining({ client_id: payee.clientId, currency: 'EUR', unsettled_net: evenShown.netAmount, waiting_reversals: evenShown.netAmount, owed: 0, next_payout_estimate: 0 }),
    ]);
    // The next sale makes a batch of everything that waited
    const refundedShown = (await readTx(partner, refunded)).body;
    const laterShown = (await readTx(partner, later)).body;
    expect(laterRun.body.created_batches).toBe(1);
    const [settled] = laterRun.body.batches;
    expect(settled.transactionIds.sort()).toEqual([even.svcTxId, later.svcTxId].sort());
    expect(settled.adjustments).toEqual([reversalOf(refundedShown, 'refund')]);
    expect(cents(settled.totalGross)).toBe(1000);
    expect(cents(settled.totalNet)).toBe(cents(laterShown.netAmount));
    const paid = await pay(partner, settled.id);
    expect(paid.status).toBe(200);
    expect(await railTransfers('a', settled.id)).toEqual([expect.objectContaining({ amount: settled.totalNet, status: 'paid' })]);
    expect((await readTx(partner, even)).body.settlementStatus).toBe('paid');
  }, TEST_TIMEOUT_MS);

  it('settles a group of 101 entries in one batch that pays exactly its net, a payment refunded before settlement settled with its refund', async () => {
    // Arrange: 99 sales, and a payment refunded before any run: 101 entries in one group (decisions.md §5a)
    const { partner, clientIds } = await freshPartner();
    const payee = { partnerId: partner.partnerId, clientId: clientIds[0] as string };
    const sales = await inParallel(Array.from({ length: 99 }, (_, i) => 1000 + i), 8, (amountMinor) => transactionIn(suite.api, payee, { amountMinor, currency: 'EUR' }));
    const anHourLater = new Date(Date.parse(yesterday()) + 3_600_000).toISOString();
    const refunded = await transactionIn(suite.api, payee, { amountMinor: 4200, currency: 'EUR' }, { createdAt: anHourLater });
    await refund(suite.api, refunded);
    const before = await balancesOf(partner, payee.clientId);

    // Act
    const ran = await run(partner);
    const batches = ran.body.batches as Array<Record<string, any>>;
    const paid = await Promise.all(batches.map((batch) => pay(partner, batch.id)));

    // Assert
    const refundedShown = (await readTx(partner, refunded)).body;
    expect(ran.body.created_batches).toBe(1);
    expect(batches.flatMap((batch) => batch.transactionIds).sort()).toEqual(sales.map((tx) => tx.svcTxId).sort());
    expect(batches.flatMap((batch) => batch.adjustments).sort((a, b) => a.type.localeCompare(b.type))).toEqual([
      reversalOf(refundedShown, 'refund'),
      { svcTxId: refunded.svcTxId, type: 'transaction', gross: 42, processorFee: refundedShown.processorFee, platformFee: refundedShown.platformFee, net: refundedShown.netAmount, createdAt: refunded.createdAt },
    ]);
    expect(batches.every((batch) => batch.totalNet >= 0)).toBe(true);
    const totalNet = batches.reduce((sum, batch) => sum + cents(batch.totalNet), 0);
    expect(totalNet).toBe(cents(Number(before[0]?.next_payout_estimate)));
    expect(paid.map((answer) => answer.status)).toEqual([200]);
    const transfers = (await Promise.all(batches.map((batch) => railTransfers('a', batch.id)))).flat();
    expect(transfers.reduce((sum, transfer) => sum + cents(transfer.amount), 0)).toBe(totalNet);
    expect(refundedShown).toMatchObject({ status: 'refunded', settlementStatus: 'paid' });
  }, TEST_TIMEOUT_MS);

  it('makes no batch while a client`s waiting reversals exceed its waiting sales (GET /balances shows what it owes), and deducts them from the first batch whose sales cover them (a payout is never negative)', async () => {
    const { partner, clientIds } = await freshPartner();
    const payee = { partnerId: partner.partnerId, clientId: clientIds[0] as string };
    const big = await transactionIn(suite.api, payee, { amountMinor: 100_000, currency: 'USD' });
    const [batch] = (await run(partner)).body.batches;
    expect((await pay(partner, batch.id)).status).toBe(200);
    await refund(suite.api, big);
    const smallTx = await transactionIn(suite.api, payee, { amountMinor: 1_000, currency: 'USD' });

    const small = await run(partner);
    const owing = await balancesOf(partner, payee.clientId);
    const smallShown = (await readTx(partner, smallTx)).body;
    const largeTx = await transactionIn(suite.api, payee, { amountMinor: 200_000, currency: 'USD' });
    const large = await run(partner);

    const bigShown = (await readTx(partner, big)).body;
    const largeShown = (await readTx(partner, largeTx)).body;
    // The merchant owes: no batch, the small sale waits
    expect(small.status).toBe(200);
    expect(small.body).toEqual({ created_batches: 0, batches: [], continuing: false });
    expect(smallShown.settlementStatus).toBe('unsettled');
    expect(owing).toEqual([
      expect.objectContaining({
        client_id: payee.clientId,
        currency: 'USD',
        unsettled_net: smallShown.netAmount,
        waiting_reversals: bigShown.netAmount,
        owed: (cents(bigShown.netAmount) - cents(smallShown.netAmount)) / 100,
        next_payout_estimate: 0,
      }),
    ]);
    // The large sale covers it: one batch of both sales and the refund
    expect(large.body.created_batches).toBe(1);
    const [settled] = large.body.batches;
    expect(settled.transactionIds.sort()).toEqual([smallTx.svcTxId, largeTx.svcTxId].sort());
    expect(settled.adjustments).toEqual([reversalOf(bigShown, 'refund')]);
    expect(settled.adjustments[0].gross).toBe(-1000);
    expect(settled.totalGross).toBe(1010);
    expect(cents(settled.totalNet)).toBe(cents(smallShown.netAmount) + cents(largeShown.netAmount) - cents(bigShown.netAmount));
    expect(settled.totalNet).toBeGreaterThan(0);
    const paid = await pay(partner, settled.id);
    expect(paid.status).toBe(200);
    expect(await railTransfers('a', settled.id)).toEqual([expect.objectContaining({ amount: settled.totalNet, status: 'paid' })]);
    expect(await balancesOf(partner, payee.clientId)).toEqual([]);
  }, TEST_TIMEOUT_MS);
});

describe('GET /settlements', () => {
  let partner: PartnerCredentials;
  let clientIds: string[];

  beforeAll(async () => {
    ({ partner, clientIds } = await freshPartner(2));
    for (const clientId of clientIds) {
      for (const currency of ['USD', 'EUR', 'CHF']) await transactionIn(suite.api, { partnerId: partner.partnerId, clientId }, { amountMinor: 1500, currency });
    }
    expect((await run(partner)).body.created_batches).toBe(6);
  }, TEST_TIMEOUT_MS);

  it('pages newest first with sealed cursors, and filters by client_id and status', async () => {
    const first = await suite.api.read(partner, '/settlements?limit=4');
    const second = await suite.api.read(partner, `/settlements?limit=4&cursor=${encodeURIComponent(first.body.next_cursor)}`);
    const byClient = await suite.api.read(partner, `/settlements?client_id=${clientIds[1]}`);
    const sent = await suite.api.read(partner, '/settlements?status=sent');
    const tampered = await suite.api.read(partner, `/settlements?limit=4&cursor=${encodeURIComponent(`${first.body.next_cursor}x`)}`);

    expect(first.body.items).toHaveLength(4);
    expect(second.body.items).toHaveLength(2);
    expect(second.body.next_cursor).toBeNull();
    const all = [...first.body.items, ...second.body.items];
    expect(new Set(all.map((batch) => batch.id)).size).toBe(6);
    expect(all.map((batch) => batch.createdAt)).toEqual([...all.map((batch) => batch.createdAt)].sort().reverse());
    expect(byClient.body.items).toHaveLength(3);
    expect(byClient.body.items.every((batch: { clientId: string }) => batch.clientId === clientIds[1])).toBe(true);
    expect(sent.body.items).toEqual([]);
    expect(tampered.status).toBe(400);
    expect(tampered.body.code).toBe('VALIDATION_ERROR');
  }, TEST_TIMEOUT_MS);

  it('refuses an unknown status filter and a partner key naming another partner', async () => {
    const badStatus = await suite.api.read(partner, '/settlements?status=paying');
    const otherPartner = await suite.api.read(partner, `/settlements?partner_id=${suite.partner.partnerId}`);

    expect(badStatus.status).toBe(400);
    expect(badStatus.body.code).toBe('VALIDATION_ERROR');
    expect(otherPartner.status).toBe(403);
    expect(otherPartner.body.code).toBe('API_KEY_SCOPE_FORBIDDEN');
  }, TEST_TIMEOUT_MS);
});
