/**
 * Settlement runs over tens of thousands of payments (decisions.md §7: one batch per group of up to 10,000 lines), at
 * the use case with the real store. Payments are seeded straight into the settlement index in the shape the service
 * writes on success (thousands through the API take minutes). Its own jest project (`npm run test:scale`), run after
 * the others with a DynamoDB Local of its own: 100,000 stream records in the shared one slow every later file's
 * outbox relay, which reads the stream from its start.
 */
import { describe, expect, it } from '@jest/globals';
import { settlementDeps } from '../../lib/composition';
import type { SettlementBatch } from '../../lib/domain/settlement';
import { listWaiting } from '../../lib/store/settlement-waiting';
import * as store from '../../lib/store/settlements';
import { runSettlement } from '../../lib/use-cases/settlements';
import type { Caller } from '../../lib/domain/caller';
import type { ServiceError } from '../../lib/domain/errors';
import { batchGetAll } from '../../lib/store/batch-get';
import { keys } from '../../lib/store/keys';
import { getPartner } from '../../lib/store/partners';
import { toTransaction, withSettlementStatus } from '../../lib/store/transactions';
import { payBatch } from '../../lib/use-cases/settlement-payouts';
import { usePartnerSuite } from '../support/api';
import { answerLost } from '../support/rail-faults';
import { railTransfers, seedWaitingPayments } from '../support/settlement';

const suite = usePartnerSuite();

async function freshMerchant() {
  const partner = await suite.api.createPartner();
  const clientId = await suite.api.createClient(partner);
  return { partnerId: partner.partnerId, clientId };
}

const idsOf = (batches: SettlementBatch[]) => batches.flatMap((batch) => batch.transactionIds);

describe('settlement runs over thousands of payments', () => {
  it('makes three batches of a group of 25,000: 10,000 + 10,000 + 5,000, oldest first, each payment in exactly one; a 10,000-line batch pays in one transfer, crash and retry included', async () => {
    const payee = await freshMerchant();
    const ids = await seedWaitingPayments(payee, 25_000);

    // One run (no request deadline here: it has the time a scheduled run has), then another that finds nothing
    const batches = await runSettlement(settlementDeps, { partnerId: payee.partnerId });
    const again = await runSettlement(settlementDeps, { partnerId: payee.partnerId });

    expect(batches.map((batch) => batch.lineCount)).toEqual([10_000, 10_000, 5_000]);
    expect(again).toEqual([]);
    // Read back from the table: each 10,000-id list from its two chunks of 5,000
    for (const batch of batches) expect((await store.getBatch(batch.id))?.transactionIds).toEqual(batch.transactionIds);
    expect(idsOf(batches)).toEqual(ids);
    expect(batches.reduce((sum, batch) => sum + batch.totals.grossMinor, 0)).toBe(ids.reduce((sum, _, i) => sum + 1000 + (i % 500), 0));
    expect((await listWaiting(payee.partnerId, undefined, undefined)).items).toEqual([]);

    // Paying the first 10,000-line batch: the rail's answer lost after it paid, then paid again: one transfer, the
    // batch sent, every one of its 10,000 transactions `paid` when read.
    const first = batches[0] as SettlementBatch;
    const caller: Caller = { kind: 'partner', keyId: 'key_scale', partner: (await getPartner(payee.partnerId))! };
    const lost = await payBatch(answerLost, caller, first.id).then(
      () => undefined,
      (error: unknown) => error,
    );
    const paid = await payBatch(settlementDeps, caller, first.id);

    expect((lost as ServiceError).code).toBe('PAYOUT_FAILED');
    const transfers = await railTransfers('b', first.id).then(async (b) => (b.length > 0 ? b : railTransfers('a', first.id)));
    expect(transfers).toEqual([expect.objectContaining({ status: 'paid', amount: first.totals.netMinor / 100 })]);
    expect(paid).toMatchObject({ status: 'sent', transferId: transfers[0]?.transfer_id });
    const read = await withSettlementStatus((await batchGetAll(first.transactionIds.map(keys.transaction))).map(toTransaction));
    expect(read).toHaveLength(10_000);
    expect(new Set(read.map((tx) => tx.settlementStatus))).toEqual(new Set(['paid']));
  }, 600_000);

  it('5 concurrent runs over 2,000 payments put each in exactly one batch: the run holding the group builds it, the others leave it', async () => {
    const payee = await freshMerchant();
    const ids = await seedWaitingPayments(payee, 2_000);

    const runs = await Promise.all(Array.from({ length: 5 }, () => runSettlement(settlementDeps, { partnerId: payee.partnerId })));

    const batches = runs.flat();
    expect(idsOf(batches).sort()).toEqual([...ids].sort());
    expect(batches).toHaveLength(1);
    const listed = await store.listBatches(payee.partnerId, {}, { limit: 10 });
    expect(listed.items.map((batch) => batch.id)).toEqual(batches.map((batch) => batch.id));
  }, 300_000);
});
