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
import { usePartnerSuite } from '../support/api';
import { seedWaitingPayments } from '../support/settlement';

const suite = usePartnerSuite();

async function freshMerchant() {
  const partner = await suite.api.createPartner();
  const clientId = await suite.api.createClient(partner);
  return { partnerId: partner.partnerId, clientId };
}

const idsOf = (batches: SettlementBatch[]) => batches.flatMap((batch) => batch.transactionIds);

describe('settlement runs over thousands of payments', () => {
  it('makes three batches of a group of 25,000: 10,000 + 10,000 + 5,000, oldest first, each payment in exactly one', async () => {
    const payee = await freshMerchant();
    const ids = await seedWaitingPayments(payee, 25_000);

    const batches = [...(await runSettlement(settlementDeps, { partnerId: payee.partnerId })), ...(await runSettlement(settlementDeps, { partnerId: payee.partnerId }))];

    expect(batches.map((batch) => batch.lineCount)).toEqual([10_000, 10_000, 5_000]);
    expect(idsOf(batches)).toEqual(ids);
    expect(batches.reduce((sum, batch) => sum + batch.totals.grossMinor, 0)).toBe(ids.reduce((sum, _, i) => sum + 1000 + (i % 500), 0));
    expect((await listWaiting(payee.partnerId, undefined, undefined)).items).toEqual([]);
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
