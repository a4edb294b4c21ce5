/**
 * Batches of any size up to 10,000 lines (decisions.md §7): built invisibly, committed by one conditional write, one
 * run at a time per group. At the use case and the store, with the real table: payments are seeded straight into
 * the settlement index in the shape the service writes on success. The runs over thousands are in
 * `test/scale/settlement-batch-sizes.test.ts`.
 */
import { describe, expect, it } from '@jest/globals';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { settlementDeps } from '../../../lib/composition';
import { contentsOf, railFor, type SettlementBatch, totalsOf } from '../../../lib/domain/settlement';
import type { Caller } from '../../../lib/domain/caller';
import { ServiceError } from '../../../lib/domain/errors';
import type { LedgerEntry } from '../../../lib/domain/ledger';
import { listBalances, owedMinor } from '../../../lib/store/balances';
import { documentClient, tableName } from '../../../lib/store/dynamo';
import { keys } from '../../../lib/store/keys';
import { queryAll } from '../../../lib/store/query-all';
import { entryItem } from '../../../lib/store/ledger-entries';
import { getPartner } from '../../../lib/store/partners';
import { payBatch } from '../../../lib/use-cases/settlement-payouts';
import { presentBatchReport } from '../../../lib/http/presenters';
import { listWaiting } from '../../../lib/store/settlement-waiting';
import * as store from '../../../lib/store/settlements';
import { getTransaction, withSettlementStatus } from '../../../lib/store/transactions';
import { batchReportFor, runSettlement, settle, type SettlementDeps } from '../../../lib/use-cases/settlements';
import type { RunContinuation } from '../../../lib/use-cases/ports/settlement-store';
import { createHandler as createContinuationHandler } from '../../../functions/settlement-continuation';
import { usePartnerSuite } from '../../support/api';
import { keepingContinuations, railTransfers, seedWaitingPayments } from '../../support/settlement';

const suite = usePartnerSuite();

async function freshMerchant() {
  const partner = await suite.api.createPartner();
  const clientId = await suite.api.createClient(partner);
  return { partnerId: partner.partnerId, clientId };
}

const statusOf = async (svcTxId: string) => (await withSettlementStatus([(await getTransaction(svcTxId))!]))[0]?.settlementStatus;

/** A chargeback entry of a payment (its gross and net as given), written waiting as the processor event's would be. */
async function chargeback(svcTxId: string, grossMinor: number, netMinor: number): Promise<void> {
  const sale = (await getTransaction(svcTxId))!;
  const entry: LedgerEntry = {
    type: 'chargeback',
    key: `chargeback#dp_${randomUUID().slice(0, 8)}`,
    cause: 'dp_test',
    svcTxId,
    partnerId: sale.partnerId,
    clientId: sale.clientId,
    partnerReference: sale.partnerReference,
    currency: sale.currency,
    txCreatedAt: sale.createdAt,
    createdAt: new Date().toISOString(),
    grossMinor,
    processorFeeMinor: 0,
    platformFeeMinor: 0,
    svcEarningMinor: 0,
    netMinor,
  };
  await documentClient.send(new PutCommand({ TableName: tableName, Item: entryItem(entry) }));
}

/**
 * A build left by a run that died: its lease already lapsed, its record `building`, `reserve` of its lines reserved
 * (the first, or those `which` picks).
 */
async function deadRunsBuild(payee: { partnerId: string; clientId: string }, reserve: number, which: (line: { type: string }) => boolean = () => true) {
  const waiting = (await listWaiting(payee.partnerId, payee.clientId, undefined)).items.filter(which).slice(0, reserve);
  const group = { ...payee, currency: 'EUR' };
  const deadRun = `dead-${randomUUID()}`;
  const now = new Date();
  expect(await store.claimGroup(group, deadRun, new Date(now.getTime() - 1).toISOString(), new Date(now.getTime() - 60_000).toISOString())).toBe(true);
  const batch: SettlementBatch = {
    id: randomUUID(),
    ...payee,
    currency: waiting[0]!.currency,
    transactionIds: [],
    adjustments: [],
    lineCount: 0,
    totals: { grossMinor: 0, processorFeesMinor: 0, platformFeesMinor: 0, netMinor: 0 },
    status: 'pending',
    rail: railFor(waiting[0]!.currency),
    transferId: null,
    payoutClaim: null,
    payoutAttempts: 0,
    failureReason: null,
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
  };
  await store.startBuild(batch, deadRun);
  const reserved = await store.reserveLines(batch, waiting, deadRun);
  return { batch, reserved, group, deadRun };
}

describe('settlement batches up to 10,000 lines', () => {
  it('settles a group of 260 payments in one batch, listed whole, every transaction queued, its report read chunk by chunk', async () => {
    const payee = await freshMerchant();
    const ids = await seedWaitingPayments(payee, 260);

    const batches = await runSettlement(settlementDeps, { partnerId: payee.partnerId });

    expect(batches).toHaveLength(1);
    expect(batches[0]?.transactionIds).toEqual(ids);
    expect(batches[0]?.lineCount).toBe(260);
    const listed = await store.listBatches(payee.partnerId, {}, { limit: 10 });
    expect(listed.items.map((batch) => [batch.id, batch.transactionIds.length])).toEqual([[batches[0]?.id, 260]]);
    expect(await store.getBatch(batches[0]!.id)).toEqual(batches[0]);
    expect(new Set(await Promise.all(ids.map(statusOf)))).toEqual(new Set(['queued']));
    // Its lines in two chunks (250 a chunk), read one at a time; the report has every one, in the batch's order.
    const chunks: number[] = [];
    for await (const chunk of store.batchLineChunks(batches[0]!.id)) chunks.push(chunk.length);
    expect(chunks).toEqual([250, 10]);
    const caller: Caller = { kind: 'partner', keyId: 'key_test', partner: (await getPartner(payee.partnerId))! };
    const report = await presentBatchReport(await batchReportFor(settlementDeps, caller, batches[0]!.id));
    const rows = String(report.text).trimEnd().split('\r\n');
    expect(rows).toHaveLength(262);
    expect(rows.slice(1, -1).map((row) => row.split(',')[1])).toEqual(ids);
    expect(rows.at(-1)).toBe(`total,,,,EUR,${[batches[0]!.totals.grossMinor, batches[0]!.totals.processorFeesMinor, batches[0]!.totals.platformFeesMinor, batches[0]!.totals.netMinor].map((minor) => (minor / 100).toFixed(2)).join(',')}`);
  }, 120_000);

});

describe('a batch read back from its chunks', () => {
  it('has every adjustment when they take several chunks (300 of 250 a chunk), in the order it was made with', async () => {
    // Arrange: 300 payments, each with a small chargeback (the sales cover them): 300 sales and 300 adjustments
    const payee = await freshMerchant();
    const ids = await seedWaitingPayments(payee, 300);
    for (const id of ids) await chargeback(id, -100, -100);

    // Act
    const [made] = await runSettlement(settlementDeps, { partnerId: payee.partnerId });
    const read = await store.getBatch(made!.id);

    // Assert
    expect(made!.adjustments).toHaveLength(300);
    expect(read?.adjustments).toEqual(made!.adjustments);
    expect(read?.transactionIds).toEqual(ids);
    expect(read?.totals).toEqual(made!.totals);
  }, 120_000);
});

describe('the largest inputs partners can give', () => {
  it('settles and reports 600 payments of a 128-emoji client id with 250-emoji references: its chunks each under DynamoDB`s 400 KB', async () => {
    // Arrange: the longest client id (128 emoji, 512 bytes) and references (250 emoji: 500 UTF-16 units, 1,000 bytes)
    const partner = await suite.api.createPartner();
    const clientId = await suite.api.createClient(partner, { client_id: '💶'.repeat(128) });
    const payee = { partnerId: partner.partnerId, clientId };
    const ids = await seedWaitingPayments(payee, 600, { partnerReference: (n) => `${'🧾'.repeat(249)}${String.fromCodePoint(0x1f300 + n)}` });

    // Act
    const batches = await runSettlement(settlementDeps, { partnerId: payee.partnerId });

    // Assert: one batch of every payment, its report whole; every chunk beside it under 400 KB
    expect(batches.map((batch) => batch.transactionIds)).toEqual([ids]);
    const caller: Caller = { kind: 'partner', keyId: 'key_test', partner: (await getPartner(payee.partnerId))! };
    const report = await presentBatchReport(await batchReportFor(settlementDeps, caller, batches[0]!.id));
    expect(String(report.text).trimEnd().split('\r\n')).toHaveLength(602);
    const chunks = await queryAll({ TableName: tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': keys.settlementBatch(batches[0]!.id).pk } });
    expect(chunks.length).toBeGreaterThan(4);
    for (const chunk of chunks) expect(new TextEncoder().encode(JSON.stringify(chunk)).length).toBeLessThan(400_000);
  }, 120_000);
});

describe('a batch as readers see it', () => {
  it('is invisible while building: no batch listed or found, its lines unsettled and still in the balance; committed, all of it at once', async () => {
    const payee = await freshMerchant();
    const ids = await seedWaitingPayments(payee, 30);
    const balanceBefore = (await listBalances(payee.partnerId, { limit: 10 })).items;
    const { batch, reserved, group, deadRun } = await deadRunsBuild(payee, 30);
    expect(reserved).toHaveLength(30);

    // Building: nothing of it shows.
    expect(await store.getBatch(batch.id)).toBeUndefined();
    expect((await store.listBatches(payee.partnerId, {}, { limit: 10 })).items).toEqual([]);
    expect(new Set(await Promise.all(ids.map(statusOf)))).toEqual(new Set(['unsettled']));
    expect((await listBalances(payee.partnerId, { limit: 10 })).items).toEqual(balanceBefore);
    expect((await listWaiting(payee.partnerId, undefined, undefined)).items).toEqual([]);

    // Committed by its run (which still holds the group): visible whole, every line queued.
    expect(await store.claimGroup(group, deadRun, new Date(Date.now() + 60_000).toISOString(), new Date().toISOString())).toBe(true);
    const made = { ...batch, ...contentsOf(reserved), totals: totalsOf(reserved) };
    expect(await store.commitBuild(made, reserved, deadRun, group)).toBe('committed');
    expect((await store.getBatch(batch.id))?.transactionIds).toEqual(ids);
    expect(new Set(await Promise.all(ids.map(statusOf)))).toEqual(new Set(['queued']));
    expect((await listBalances(payee.partnerId, { limit: 10 })).items).toEqual([]);
  }, 120_000);

  it('a build left by a run that died is discarded by the next run, which settles every line in one batch of its own', async () => {
    const payee = await freshMerchant();
    const ids = await seedWaitingPayments(payee, 40);
    const { batch, reserved, group, deadRun } = await deadRunsBuild(payee, 25);
    expect(reserved).toHaveLength(25);

    const batches = await runSettlement(settlementDeps, { partnerId: payee.partnerId });

    expect(batches).toHaveLength(1);
    expect(batches[0]?.id).not.toBe(batch.id);
    expect(batches[0]?.transactionIds).toEqual(ids);
    expect(await store.getBatch(batch.id)).toBeUndefined();
    // The dead run, back, cannot commit what was discarded.
    expect(await store.commitBuild({ ...batch, transactionIds: reserved.map((line) => line.svcTxId) }, reserved, deadRun, group)).toBe('lost');
    expect((await store.listBatches(payee.partnerId, {}, { limit: 10 })).items.map((b) => b.id)).toEqual([batches[0]?.id]);
  }, 120_000);
});

describe('reservations', () => {
  it('refuse a run that stalled past its lease: nothing goes into its build once another run discarded it', async () => {
    // Arrange: a dead run's build of 5 of 12 lines, discarded by another run; the dead run comes back with the other 7
    const payee = await freshMerchant();
    await seedWaitingPayments(payee, 12);
    const all = (await listWaiting(payee.partnerId, payee.clientId, undefined)).items;
    const { batch, deadRun } = await deadRunsBuild(payee, 5);
    expect(await store.discardBuild(batch, new Date().toISOString())).toBe('discarded');

    // Act
    const late = await store.reserveLines(batch, all.slice(5), deadRun);

    // Assert: none reserved, all 12 wait
    expect(late).toEqual([]);
    expect((await listWaiting(payee.partnerId, payee.clientId, undefined)).items.map((line) => line.svcTxId)).toEqual(all.map((line) => line.svcTxId));
  }, 120_000);

  it('count a line whose reservation was applied but whose answer was lost: the batch`s lines are what its build holds', async () => {
    // Arrange: a build with 3 of 8 lines reserved by writes whose answers were lost (applied; the retry fails its condition)
    const payee = await freshMerchant();
    await seedWaitingPayments(payee, 8);
    const all = (await listWaiting(payee.partnerId, payee.clientId, undefined)).items;
    const { batch, deadRun } = await deadRunsBuild(payee, 3);

    // Act: the run, unaware, reserves all 8
    const reserved = await store.reserveLines(batch, all, deadRun);

    // Assert
    expect(reserved.map((line) => line.svcTxId)).toEqual(all.map((line) => line.svcTxId));
  }, 120_000);
});

describe('a payout while the merchant owes', () => {
  it('pays a batch that pays more than the merchant owes: the debt stays owed (one that pays less is held: below and in ledger.test.ts)', async () => {
    // Arrange: a batch of 3 payments (about 29.00 net), then a 10.00 chargeback of one of them: owed 10.00
    const payee = await freshMerchant();
    const [first] = await seedWaitingPayments(payee, 3);
    const [batch] = await runSettlement(settlementDeps, { partnerId: payee.partnerId });
    await chargeback(first!, -1_000, -1_000);
    const caller: Caller = { kind: 'partner', keyId: 'key_test', partner: (await getPartner(payee.partnerId))! };

    // Act
    const paid = await payBatch(settlementDeps, caller, batch!.id);

    // Assert: paid; the 10.00 still owed
    expect(batch!.totals.netMinor).toBeGreaterThan(1_000);
    expect(paid).toMatchObject({ status: 'sent' });
    expect(await owedMinor({ ...payee, currency: 'EUR' })).toBe(1_000);
    expect(await railTransfers('a', batch!.id)).toEqual([expect.objectContaining({ status: 'paid', amount: batch!.totals.netMinor / 100 })]);
  }, 120_000);
});

describe('a payout while a batch builds', () => {
  it('is held while the merchant owes, even when the build has reserved the reversal and not yet the sales that cover it', async () => {
    // Arrange: a batch of 3 payments (not paid), then a 50.00 dispute on a payment settled in it (with its 15.00 fee):
    // the merchant owes. A run building the group dies after reserving the dispute's entry alone.
    const payee = await freshMerchant();
    const [disputed] = await seedWaitingPayments(payee, 3);
    const [batch] = await runSettlement(settlementDeps, { partnerId: payee.partnerId });
    await chargeback(disputed!, -5_000, -6_500);
    const owed = await owedMinor({ ...payee, currency: 'EUR' });
    expect(owed).toBe(6_500);
    const { reserved } = await deadRunsBuild(payee, 1, (line) => line.type === 'chargeback');
    expect(reserved.map((line) => line.type)).toEqual(['chargeback']);
    expect((await listWaiting(payee.partnerId, payee.clientId, undefined)).items).toEqual([]);

    // Act
    const caller: Caller = { kind: 'partner', keyId: 'key_test', partner: (await getPartner(payee.partnerId))! };
    const refusal = await payBatch(settlementDeps, caller, batch!.id).then(
      () => undefined,
      (error: unknown) => error,
    );

    // Assert: held (the reserved reversal still counts), nothing claimed, nothing paid
    expect(await owedMinor({ ...payee, currency: 'EUR' })).toBe(owed);
    expect(refusal).toBeInstanceOf(ServiceError);
    expect((refusal as ServiceError).code).toBe('CLIENT_OWES');
    expect(await store.getBatch(batch!.id)).toMatchObject({ status: 'pending', payoutClaim: null, transferId: null });
  }, 120_000);
});

describe('a run that cannot finish in its time goes on by itself', () => {
  it('queues one continuation per scope at a time: another run of the scope sends none until it has started (or lapsed)', async () => {
    const scope = { partnerId: `ptr_${randomUUID()}` };
    const now = new Date();
    const later = (ms: number) => new Date(now.getTime() + ms).toISOString();

    expect(await store.markContinuationPending(scope, later(60_000), now.toISOString())).toBe(true);
    expect(await store.markContinuationPending(scope, later(60_000), later(1_000))).toBe(false);
    expect(await store.markContinuationPending({ ...scope, clientId: 'shop-1' }, later(60_000), now.toISOString())).toBe(true);
    // Lapsed (a continuation lost): the scope may send again
    expect(await store.markContinuationPending(scope, later(120_000), later(61_000))).toBe(true);
    // Started: another may be sent at once
    await store.clearContinuationPending(scope);
    expect(await store.markContinuationPending(scope, later(60_000), now.toISOString())).toBe(true);
  }, 60_000);

  it('sends what it left as a continuation, which the continuation function settles with the same cutoff: every payment in a batch, none twice', async () => {
    const payee = await freshMerchant();
    const ids = await seedWaitingPayments(payee, 12);
    const sent: RunContinuation[] = [];
    // A run that reads 5 entries of a partner at a time, and a queue that keeps what is sent to it.
    const deps: SettlementDeps = {
      ...settlementDeps,
      settlements: { ...settlementDeps.settlements, listWaiting: (partnerId, client, cutoff) => listWaiting(partnerId, client, cutoff, 5) },
      continuations: keepingContinuations(sent),
    };

    const run = await settle(deps, { partnerId: payee.partnerId });
    const consume = createContinuationHandler(deps);
    for (let i = 0; i < sent.length && i < 10; i++) {
      await consume({ Records: [{ messageId: `m${i}`, body: JSON.stringify(sent[i]) }] } as never);
    }

    expect(run.continuing).toBe(true);
    // A read cut inside the group settles whole payments up to the last one read: 4 of the 5 read, each time.
    expect(run.batches.flatMap((batch) => batch.transactionIds)).toEqual(ids.slice(0, 4));
    expect(sent.map((next) => [next.attempt, next.cutoff, next.scope.partnerId])).toEqual([1, 2].map((attempt) => [attempt, sent[0]?.cutoff, payee.partnerId]));
    const listed = await store.listBatches(payee.partnerId, {}, { limit: 10 });
    expect(listed.items.flatMap((batch) => batch.transactionIds).sort()).toEqual([...ids].sort());
    expect((await listWaiting(payee.partnerId, undefined, undefined)).items).toEqual([]);
  }, 120_000);
});
