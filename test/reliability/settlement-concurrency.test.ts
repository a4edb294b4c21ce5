/**
 * Settlement under concurrency (docs/settlement.md; decisions.md §7): runs started at once from every
 * entry point (POST /settlements/run with a partner key, with a platform key, narrowed to a client, and the
 * scheduled function) put every eligible transaction in exactly one batch and every waiting ledger entry in exactly one
 * batch, and nothing else in any; refunds and chargebacks racing runs are ledger entries (decisions.md §5a) that
 * each batch settles once, beside their sale or in a later batch, and a client whose reversals exceed what waits
 * gets no batch (it owes), so the merchant is paid exactly the net of what it kept; pays started at once, many per batch and for every batch
 * together, with one rail failing under them, make exactly one paid transfer per batch, on its own rail.
 *
 * The rails are a sandbox of this file's own, so the rail failure it injects (`fail-next`) cannot be consumed by
 * another test file's payout running at the same time.
 *
 * Already covered elsewhere, and not repeated: 5 concurrent HTTP runs over one client's 230 transactions, 10
 * concurrent pays of one rail-A batch (test/integration/settlement/settlements.test.ts); a payout whose answer is lost or whose
 * process dies holding the claim (test/integration/settlement/crashes.test.ts).
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { type RailsSandbox, SANDBOX_RAIL_KEYS, startRailsSandbox } from '../../infra/local/sandbox/rails';
import type { ApiResponse as Response, PartnerCredentials as Credentials } from '../support/api';
import { freePort } from '../support/ports';

const rails: RailsSandbox = await startRailsSandbox({ port: await freePort(), keys: SANDBOX_RAIL_KEYS });
// The service's configuration is read once, when its modules load: point its rails at this sandbox first.
process.env.RAILS_SANDBOX_PORT = String(rails.port);
const { usePartnerSuite } = await import('../support/api');
const { createHandler: scheduledRun } = await import('../../functions/settlement-scheduled');
const { settlementDeps } = await import('../../lib/composition/settlement');
const { chargeBack, failNextPayout, inParallel, refund, transactionIn } = await import('../support/settlement');
const { seededRandom, sleep, tally } = await import('../support/reliability/tools');
const { seedFrom } = await import('../support/seeds');
type Transaction = Awaited<ReturnType<typeof transactionIn>>;
type SettlementDeps = typeof settlementDeps;

const TEST_TIMEOUT_MS = 90_000;

const suite = usePartnerSuite();
afterAll(() => rails.close());

const run = (key: Pick<Credentials, 'apiKey'>, query = '') => suite.api.request('POST', `/settlements/run${query}`, { headers: { 'x-api-key': key.apiKey } });
const pay = (key: Pick<Credentials, 'apiKey'>, batchId: string) =>
  suite.api.request('POST', '/settlements/pay', {
    headers: { 'x-api-key': key.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ settlement_batch_id: batchId }),
  });

/**
 * The scheduled function over `partnerIds` only (the table is shared with other test files running at the same
 * time); `afterRead` runs once a run has read what waits, before it plans and writes anything.
 */
const scheduledFor = (partnerIds: string[], afterRead: () => Promise<void> = async () => {}) =>
  scheduledRun({
    ...settlementDeps,
    partners: { ...settlementDeps.partners, allPartnerIds: async function* () { yield* partnerIds; } },
    settlements: {
      ...settlementDeps.settlements,
      listWaiting: async (...args: Parameters<SettlementDeps['settlements']['listWaiting']>) => {
        const waiting = await settlementDeps.settlements.listWaiting(...args);
        await afterRead();
        return waiting;
      },
    },
  } satisfies SettlementDeps);

/** Resolves for every caller once `count` callers are waiting: runs that all read before any writes. */
function barrier(count: number): () => Promise<void> {
  let arrived = 0;
  let release = () => {};
  const open = new Promise<void>((resolve) => (release = resolve));
  return () => {
    if (++arrived === count) release();
    return open;
  };
}

async function listAll(key: Pick<Credentials, 'apiKey'>, path: string): Promise<Array<Record<string, any>>> {
  const items: Array<Record<string, any>> = [];
  let cursor: string | null = null;
  do {
    const page: Response = await suite.api.read(key, `${path}${path.includes('?') ? '&' : '?'}limit=200${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
    expect(page.status).toBe(200);
    items.push(...page.body.items);
    cursor = page.body.next_cursor;
  } while (cursor !== null);
  return items;
}

const minor = (major: number, currency: string) => Math.round(major * 10 ** (currency === 'JPY' ? 0 : 2));

/** A batch line as the API lists it: a sale it pays (`transactionIds`), or another entry (`adjustments`). */
type Line = { svcTxId: string; type: string; net: number; gross: number };
/** Every line of a batch: its transactions' sales, then its other entries (decisions.md §5a). */
const linesOf = (batch: Record<string, any>, shown: Map<string, Record<string, any>>): Line[] => [
  ...(batch.transactionIds as string[]).map((svcTxId) => ({ svcTxId, type: 'transaction', net: shown.get(svcTxId)?.netAmount, gross: shown.get(svcTxId)?.amount })),
  ...(batch.adjustments as Line[]),
];

describe('concurrent settlement runs', () => {
  it('HTTP runs (partner key, platform key, one client) and scheduled runs at once: every eligible transaction in exactly one batch, each payment refunded before them settled once as its sale and its refund, nothing else in any', async () => {
    // Arrange: one partner, two clients, four currencies over both rails; one group of 105 (more than the 99 a batch held before decisions.md §7)
    const partner = await suite.api.createPartner();
    const platform = await suite.api.createPlatformKey();
    const [c1, c2] = [await suite.api.createClient(partner), await suite.api.createClient(partner)] as [string, string];
    const groups: Array<{ clientId: string; currency: string; count: number }> = [
      { clientId: c1, currency: 'USD', count: 105 },
      { clientId: c1, currency: 'JPY', count: 8 },
      { clientId: c2, currency: 'EUR', count: 10 },
      { clientId: c2, currency: 'CHF', count: 6 },
    ];
    const wanted = groups.flatMap(({ clientId, currency, count }) => Array.from({ length: count }, (_, i) => ({ clientId, currency, amountMinor: 500 + i })));
    const eligible = await inParallel(wanted, 8, ({ clientId, currency, amountMinor }) =>
      transactionIn(suite.api, { partnerId: partner.partnerId, clientId }, { amountMinor, currency }),
    );
    const payee1 = { partnerId: partner.partnerId, clientId: c1 };
    const payee2 = { partnerId: partner.partnerId, clientId: c2 };
    const refunded = [await transactionIn(suite.api, payee2, { amountMinor: 700, currency: 'EUR' }), await transactionIn(suite.api, payee1, { amountMinor: 701, currency: 'USD' })];
    for (const tx of refunded) await refund(suite.api, tx);
    // Refunded before any run: in no batch's transactionIds, but their sale and refund entries (net 0) wait, each to be
    // settled once (decisions.md §5a)
    const ineligible: Transaction[] = [
      await transactionIn(suite.api, payee1, { amountMinor: 800, currency: 'USD' }, { status: 'pending' }),
      await transactionIn(suite.api, payee1, { amountMinor: 801, currency: 'USD' }, { status: 'failed' }),
      await transactionIn(suite.api, payee2, { amountMinor: 802, currency: 'EUR' }, { createdAt: new Date().toISOString() }),
    ];
    // Four scheduled runs that all read every waiting transaction before any writes a batch: each plans the same
    // batches, so all but one lose every line of each and must find that out (none of them may double-book a line).
    const scheduled = scheduledFor([partner.partnerId], barrier(4));
    const timeLeft = { getRemainingTimeInMillis: () => 60_000 };

    // Act: every entry point at once, then one more run to find what they left
    const [httpAnswers, scheduledAnswers] = await Promise.all([
      Promise.all([
        run(partner),
        run(partner),
        run(partner),
        run(partner, `?client_id=${c1}`),
        run(platform, `?partner_id=${partner.partnerId}`),
        run(platform, `?partner_id=${partner.partnerId}&client_id=${c2}`),
      ]),
      Promise.all([scheduled({}, timeLeft), scheduled({}, timeLeft), scheduled({}, timeLeft), scheduled({}, timeLeft)]),
    ]);
    const after = await run(partner);

    // Assert: every run answered; what they say they made is what is listed
    expect(tally(httpAnswers)).toEqual({ 200: httpAnswers.length });
    expect(after.status).toBe(200);
    expect(after.body.created_batches).toBe(0);
    const answered = httpAnswers.flatMap((answer) => answer.body.batches as Array<Record<string, any>>);
    for (const answer of httpAnswers) expect(answer.body.batches).toHaveLength(answer.body.created_batches);
    const createdCount = answered.length + scheduledAnswers.reduce((sum, answer) => sum + answer.created_batches, 0);
    const listed = await listAll(partner, '/settlements');
    expect(listed).toHaveLength(createdCount);
    const listedIds = new Set(listed.map((batch) => batch.id));
    expect(answered.every((batch) => listedIds.has(batch.id))).toBe(true);
    expect(new Set(answered.map((batch) => batch.id)).size).toBe(answered.length);

    // Assert: each eligible transaction in exactly one batch's transactionIds, of its own client and currency
    const placed: string[] = listed.flatMap((batch) => batch.transactionIds);
    expect(placed).toHaveLength(eligible.length);
    expect(new Set(placed)).toEqual(new Set(eligible.map((tx) => tx.svcTxId)));
    const byId = new Map([...eligible, ...refunded].map((tx) => [tx.svcTxId, tx]));
    const shown = new Map((await listAll(partner, '/transactions')).map((tx) => [tx.svcTxId as string, tx]));
    for (const batch of listed) {
      const lines = linesOf(batch, shown);
      expect(lines.length).toBeLessThanOrEqual(10_000);
      expect(lines.every((line) => byId.get(line.svcTxId)?.clientId === batch.clientId && byId.get(line.svcTxId)?.currency === batch.currency)).toBe(true);
      // The totals are the lines' exact sums; the refunded payments' entries add nothing to them (net and gross 0 each)
      const transactions = batch.transactionIds.map((id: string) => byId.get(id)!);
      expect(minor(batch.totalGross, batch.currency)).toBe(transactions.reduce((sum: number, tx: Transaction) => sum + tx.amountMinor, 0));
      expect(minor(batch.totalGross, batch.currency)).toBe(lines.reduce((sum, line) => sum + minor(line.gross, batch.currency), 0));
      expect(minor(batch.totalNet, batch.currency)).toBe(lines.reduce((sum, line) => sum + minor(line.net, batch.currency), 0));
      expect(batch).toMatchObject({ partnerId: partner.partnerId, status: 'pending' });
    }
    // Assert: one batch per group (client, currency) whatever the runs racing for it (decisions.md §7)
    expect(new Set(listed.map((batch) => `${batch.clientId}#${batch.currency}`)).size).toBe(listed.length);
    // Assert: nothing else in any batch: besides the sales they pay, exactly each refunded payment's sale and refund, once
    const adjustments = listed.flatMap((batch) => batch.adjustments as Line[]).map(({ svcTxId, type, gross }) => ({ svcTxId, type, gross }));
    const refundedEntries = refunded.flatMap((tx) => [
      { svcTxId: tx.svcTxId, type: 'transaction', gross: tx.amountMinor / 100 },
      { svcTxId: tx.svcTxId, type: 'refund', gross: -tx.amountMinor / 100 },
    ]);
    const order = (a: { svcTxId: string; type: string }, b: { svcTxId: string; type: string }) => `${a.svcTxId}${a.type}`.localeCompare(`${b.svcTxId}${b.type}`);
    expect(adjustments.sort(order)).toEqual(refundedEntries.sort(order));
    for (const tx of eligible) expect(shown.get(tx.svcTxId)?.settlementStatus).toBe('queued');
    for (const tx of refunded) expect(shown.get(tx.svcTxId)).toMatchObject({ status: 'refunded', settlementStatus: 'queued' });
    for (const tx of ineligible) expect(shown.get(tx.svcTxId)?.settlementStatus).toBe('unsettled');
    console.log(
      `concurrent settlement runs: ${listed.length} batches of ${eligible.length} transactions, made by the HTTP runs ` +
        `[${httpAnswers.map((answer) => answer.body.created_batches).join(', ')}] and the scheduled runs [${scheduledAnswers.map((answer) => answer.created_batches).join(', ')}]`,
    );
  }, TEST_TIMEOUT_MS);
});

describe('refunds and chargebacks racing concurrent runs', () => {
  it('each reversed payment`s sale and reversal entry are settled once each, beside each other or the reversal in a later batch; a client owing gets no batch: what the merchant is paid is exactly the net of what it kept', async () => {
    // Arrange: 30 succeeded payments of one client; 10 will be refunded and 5 charged back: before, during and after 3 runs
    const partner = await suite.api.createPartner();
    const clientId = await suite.api.createClient(partner);
    const payee = { partnerId: partner.partnerId, clientId };
    const transactions = await inParallel(Array.from({ length: 30 }, (_, i) => 2_000 + i), 8, (amountMinor) => transactionIn(suite.api, payee, { amountMinor, currency: 'EUR' }));
    const reversals = new Map<string, 'refund' | 'chargeback'>(transactions.slice(0, 15).map((tx, i) => [tx.svcTxId, i % 3 === 2 ? 'chargeback' : 'refund']));
    const reverse = (tx: Transaction) => (reversals.get(tx.svcTxId) === 'refund' ? refund(suite.api, tx) : chargeBack(suite.api, tx));
    const [before, racing, after] = [transactions.slice(0, 5), transactions.slice(5, 10), transactions.slice(10, 15)];
    // The racing reversals' pauses: the same every run unless SETTLEMENT_RACE_SEED draws others (printed).
    const seed = seedFrom('SETTLEMENT_RACE_SEED', 28_112_026);
    const random = seededRandom(seed);

    // Act: 5 reversed before the runs; 3 runs and 5 reversals at once (each after a random pause of up to 100 ms);
    // 5 reversed after the runs; then one more run
    for (const tx of before) await reverse(tx);
    await Promise.all([
      run(partner),
      run(partner),
      run(partner),
      ...racing.map(async (tx) => {
        await sleep(Math.floor(random() * 100));
        await reverse(tx);
      }),
    ]);
    for (const tx of after) await reverse(tx);
    const owingRun = await run(partner);
    const balances = await suite.api.read(partner, `/balances?client_id=${clientId}`);
    const batched = await listAll(partner, '/settlements');
    const shown = new Map((await listAll(partner, '/transactions')).map((tx) => [tx.svcTxId as string, tx]));

    // Assert: each payment's sale and each reversal entry in at most one batch; every kept one paid by exactly one
    const lines = batched.flatMap((batch) => linesOf(batch, shown));
    const ids = (type: (line: Line) => boolean) => lines.filter(type).map((line) => line.svcTxId);
    const placedSales = ids((line) => line.type === 'transaction');
    const placedReversals = ids((line) => line.type !== 'transaction');
    const paidTransactions: string[] = batched.flatMap((batch) => batch.transactionIds);
    expect(placedSales).toHaveLength(new Set(placedSales).size);
    expect(placedReversals).toHaveLength(new Set(placedReversals).size);
    for (const line of lines) expect(line.type === 'transaction' ? true : reversals.get(line.svcTxId) === line.type).toBe(true);
    for (const tx of transactions) {
      const reversal = reversals.get(tx.svcTxId);
      const read = shown.get(tx.svcTxId);
      expect(read?.status).toBe(reversal === undefined ? 'succeeded' : reversal === 'refund' ? 'refunded' : 'chargeback');
      expect([read?.refundedAmount, read?.disputedAmount]).toEqual(reversal === 'refund' ? [read?.amount, 0] : reversal === 'chargeback' ? [0, read?.amount] : [0, 0]);
      if (reversal === undefined) expect(paidTransactions).toContain(tx.svcTxId);
      expect(read?.settlementStatus).toBe(placedSales.includes(tx.svcTxId) ? 'queued' : 'unsettled');
    }
    // Reversed before the runs: settled as entries beside their reversal (in no transactionIds); after: paid, their reversal waiting
    for (const tx of before) expect([paidTransactions.includes(tx.svcTxId), placedSales.includes(tx.svcTxId), placedReversals.includes(tx.svcTxId)]).toEqual([false, true, true]);
    for (const tx of after) expect([paidTransactions.includes(tx.svcTxId), placedReversals.includes(tx.svcTxId)]).toEqual([true, false]);
    for (const batch of batched) expect(minor(batch.totalNet, 'EUR')).toBe(linesOf(batch, shown).reduce((sum, line) => sum + minor(line.net, 'EUR'), 0));

    // Assert: what waits is what no batch took; its reversals exceed its sales, so the last run made no batch and the merchant owes
    const netOf = (svcTxId: string) => minor(shown.get(svcTxId)?.netAmount, 'EUR');
    const waitingSales = transactions.filter((tx) => !placedSales.includes(tx.svcTxId)).reduce((sum, tx) => sum + netOf(tx.svcTxId), 0);
    const waitingReversals = [...reversals.keys()].filter((svcTxId) => !placedReversals.includes(svcTxId)).reduce((sum, svcTxId) => sum + netOf(svcTxId), 0);
    expect(waitingReversals).toBeGreaterThan(waitingSales);
    expect(owingRun.status).toBe(200);
    expect(owingRun.body).toEqual({ created_batches: 0, batches: [], continuing: false });
    expect(balances.body).toEqual({
      items: [
        expect.objectContaining({ client_id: clientId, currency: 'EUR', unsettled_net: waitingSales / 100, waiting_reversals: waitingReversals / 100, owed: (waitingReversals - waitingSales) / 100, next_payout_estimate: 0 }),
      ],
      next_cursor: null,
    });

    // Act: while the merchant owes, a batch that pays less than it owes is held, one that pays more is paid
    // (decisions.md §5a: no payout while it owes more than it has earned); then a large payment, whose batch is the
    // first that may settle what waits; then every batch held is paid
    const owed = waitingReversals - waitingSales;
    const held = batched.filter((batch) => minor(batch.totalNet, 'EUR') < owed);
    for (const batch of batched) {
      expect(await pay(partner, batch.id)).toMatchObject(held.includes(batch) ? { status: 409, body: { code: 'CLIENT_OWES' } } : { status: 200, body: { status: 'sent' } });
    }
    const large = await transactionIn(suite.api, payee, { amountMinor: 100_000, currency: 'EUR' });
    const next = await run(partner);
    expect(next.body.created_batches).toBe(1);
    const [last] = next.body.batches as [Record<string, any>];
    for (const batch of held) expect((await pay(partner, batch.id)).status).toBe(200);
    expect((await pay(partner, last.id)).status).toBe(200);

    // Assert: the last batch pays the large payment and settles exactly what waited, each entry once, as what it was
    expect(last.transactionIds).toEqual([large.svcTxId]);
    const waited = [
      ...transactions.filter((tx) => !placedSales.includes(tx.svcTxId)).map((tx) => [tx.svcTxId, 'transaction']),
      ...[...reversals].filter(([svcTxId]) => !placedReversals.includes(svcTxId)),
    ];
    expect(last.adjustments.map((adjustment: Line) => [adjustment.svcTxId, adjustment.type]).sort()).toEqual(waited.sort());
    expect(await suite.api.read(partner, `/balances?client_id=${clientId}`)).toMatchObject({ status: 200, body: { items: [], next_cursor: null } });
    // Assert: money in = money out. Everything paid to the merchant (all batches, at the rail) is the net of the kept payments.
    const largeNet = minor((await suite.api.read(partner, `/transactions/${large.svcTxId}`)).body.netAmount, 'EUR');
    const kept = transactions.filter((tx) => !reversals.has(tx.svcTxId)).reduce((sum, tx) => sum + netOf(tx.svcTxId), largeNet);
    const paidOut = [...batched, last].reduce((sum, batch) => sum + minor(batch.totalNet, 'EUR'), 0);
    expect(paidOut).toBe(kept);
    const transfers = rails.transfers('rail-a').filter((transfer) => [...batched, last].some((batch) => batch.id === transfer.batch_id));
    expect(transfers.every((transfer) => transfer.status === 'paid')).toBe(true);
    expect(transfers.reduce((sum, transfer) => sum + minor(transfer.amount, 'EUR'), 0)).toBe(kept);
    const shownAfter = new Map((await listAll(partner, '/transactions')).map((tx) => [tx.svcTxId as string, tx]));
    for (const tx of transactions) expect(shownAfter.get(tx.svcTxId)?.settlementStatus).toBe('paid');
    const racingPaid = racing.filter((tx) => paidTransactions.includes(tx.svcTxId)).length;
    console.log(
      `refunds racing runs: of the 5 reversed during the runs, ${racingPaid} lost to a batch (deducted later) and ${5 - racingPaid} were settled as entries beside their reversal; ` +
        `the merchant owed ${(waitingReversals - waitingSales) / 100} EUR before the large payment`,
    );
  }, TEST_TIMEOUT_MS);
});

describe('concurrent pays', () => {
  it('8 pays of every batch at once (partner and platform keys), one rail failing under them: exactly one paid transfer per batch, on its own rail', async () => {
    // Arrange: four batches, two per rail (A: GBP, USD; B: JPY, CHF)
    const partner = await suite.api.createPartner();
    const platform = await suite.api.createPlatformKey();
    const [c1, c2] = [await suite.api.createClient(partner), await suite.api.createClient(partner)] as [string, string];
    const wanted = [
      { clientId: c1, currency: 'GBP' },
      { clientId: c1, currency: 'USD' },
      { clientId: c2, currency: 'JPY' },
      { clientId: c2, currency: 'CHF' },
    ].flatMap((group) => [0, 1, 2].map((i) => ({ ...group, amountMinor: 2_000 + i })));
    const transactions = await inParallel(wanted, 8, ({ clientId, currency, amountMinor }) =>
      transactionIn(suite.api, { partnerId: partner.partnerId, clientId }, { amountMinor, currency }),
    );
    const ran = await run(partner);
    expect(ran.body.created_batches).toBe(4);
    const batches: Array<Record<string, any>> = ran.body.batches;
    const railOf = (batch: Record<string, any>) => (['GBP', 'EUR', 'USD'].includes(batch.currency) ? 'rail-a' : 'rail-b');
    // The next payout on rail B fails: one of the two rail-B batches (whichever pays first) meets it.
    await failNextPayout('b');
    const pays = (batch: Record<string, any>) => [...Array.from({ length: 5 }, () => pay(partner, batch.id)), ...Array.from({ length: 3 }, () => pay(platform, batch.id))];

    // Act: round 1, 32 pays at once; round 2, the same again (a failed batch is payable again); round 3, once more
    const rounds: Response[][][] = [];
    for (let round = 0; round < 3; round++) rounds.push(await Promise.all(batches.map((batch) => Promise.all(pays(batch)))));

    // Assert: per batch, exactly one 200 over all rounds; everything else a 409, or the one 502 of the failed payout
    const allowed = ['200', '409 BATCH_PAYOUT_IN_PROGRESS', '409 BATCH_ALREADY_PAID', '502 PAYOUT_FAILED'];
    batches.forEach((_batch, b) => {
      const answers = rounds.flatMap((round) => round[b] as Response[]);
      const counts = tally(answers);
      expect(Object.keys(counts).filter((status) => !allowed.includes(status))).toEqual([]);
      expect(counts['200']).toBe(1);
      expect(tally(rounds[2]?.[b] as Response[])).toEqual({ '409 BATCH_ALREADY_PAID': 8 });
    });
    expect(batches.reduce((failures, _batch, b) => failures + (tally(rounds.flatMap((round) => round[b] as Response[]))['502 PAYOUT_FAILED'] ?? 0), 0)).toBe(1);

    // Assert: at the rails, one paid transfer per batch of its net, on its own rail only; the failed attempt recorded
    for (const batch of batches) {
      const own = rails.transfers(railOf(batch)).filter((transfer) => transfer.batch_id === batch.id);
      const other = rails.transfers(railOf(batch) === 'rail-a' ? 'rail-b' : 'rail-a').filter((transfer) => transfer.batch_id === batch.id);
      expect(other).toEqual([]);
      expect(own.filter((transfer) => transfer.status === 'paid')).toEqual([expect.objectContaining({ amount: batch.totalNet, currency: batch.currency })]);
      expect(own.filter((transfer) => transfer.status === 'failed').length).toBeLessThanOrEqual(1);
    }
    expect(batches.flatMap((batch) => rails.transfers('rail-b').filter((t) => t.batch_id === batch.id && t.status === 'failed'))).toHaveLength(1);
    const listed = await listAll(partner, '/settlements');
    expect(listed.map((batch) => batch.status)).toEqual(['sent', 'sent', 'sent', 'sent']);
    const shown = await listAll(partner, '/transactions');
    expect(shown.filter((tx) => transactions.some((own) => own.svcTxId === tx.svcTxId)).map((tx) => tx.settlementStatus)).toEqual(Array(12).fill('paid'));
  }, TEST_TIMEOUT_MS);
});
