/**
 * Settlement under faults, at the use case with the real store and the sandbox rails, faults injected at the
 * ports: a payout whose answer is lost after the rail paid, a process that dies holding a payout claim, and the
 * scheduled run over every partner (decisions.md §7: "concurrent pays never pay twice"; "a crash after
 * the rail accepted the payout must not pay twice on retry").
 */
import { describe, expect, it } from '@jest/globals';
import { createHandler as scheduledRun } from '../../../functions/settlement-scheduled';
import { settlementDeps } from '../../../lib/composition';
import type { Caller } from '../../../lib/domain/caller';
import { ServiceError } from '../../../lib/domain/errors';
import type { RunContinuation } from '../../../lib/use-cases/ports/settlement-store';
import { getPartner } from '../../../lib/store/partners';
import { listWaiting } from '../../../lib/store/settlement-waiting';
import { getBatch } from '../../../lib/store/settlements';
import { payBatch } from '../../../lib/use-cases/settlement-payouts';
import { runSettlement, type SettlementDeps } from '../../../lib/use-cases/settlements';
import { usePartnerSuite } from '../../support/api';
import { answerLost } from '../../support/rail-faults';
import { keepingContinuations, railTransfers, transactionIn, yesterday } from '../../support/settlement';

/** Each test brings its transactions to `succeeded` through the processor webhook, and runs with the rest of the suite. */
const TEST_TIMEOUT_MS = 60_000;

const suite = usePartnerSuite();

async function pendingBatchOfNewPartner() {
  const partner = await suite.api.createPartner();
  const clientId = await suite.api.createClient(partner);
  await transactionIn(suite.api, { partnerId: partner.partnerId, clientId }, { amountMinor: 4321, currency: 'USD' });
  await transactionIn(suite.api, { partnerId: partner.partnerId, clientId }, { amountMinor: 1234, currency: 'USD' });
  const [batch] = await runSettlement(settlementDeps, { partnerId: partner.partnerId });
  if (batch === undefined) throw new Error('no batch');
  const caller: Caller = { kind: 'partner', keyId: partner.keyId, partner: (await getPartner(partner.partnerId))! };
  return { partner, batch, caller };
}

const rejection = async (work: Promise<unknown>) => {
  try {
    await work;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
};

describe('a payout interrupted after the rail paid', () => {
  it('is recorded failed when the rail`s answer is lost, and paying again finds the payout made: one paid transfer, never two', async () => {
    const { batch, caller } = await pendingBatchOfNewPartner();

    const lost = await rejection(payBatch(answerLost, caller, batch.id));
    const afterLoss = await getBatch(batch.id);
    const retried = await payBatch(settlementDeps, caller, batch.id);

    expect(lost).toBeInstanceOf(ServiceError);
    expect((lost as ServiceError).code).toBe('PAYOUT_FAILED');
    expect(afterLoss).toMatchObject({ status: 'failed', transferId: null, payoutClaim: null });
    expect(afterLoss?.failureReason).toBe('The payout rail did not confirm the payout. Paying the batch again is safe: a payout already made is found, not repeated.');
    const transfers = await railTransfers('a', batch.id);
    expect(transfers).toEqual([expect.objectContaining({ status: 'paid', amount: batch.totals.netMinor / 100 })]);
    expect(retried).toMatchObject({ status: 'sent', transferId: transfers[0]?.transfer_id });
  }, TEST_TIMEOUT_MS);

  it('asks the rail before paying again, so a rail that has forgotten the idempotency key still pays once', async () => {
    const { batch, caller } = await pendingBatchOfNewPartner();
    let paysAfterLoss = 0;
    const forgetful: SettlementDeps = {
      ...settlementDeps,
      rails: {
        ...settlementDeps.rails,
        // A rail that kept keys for a day: under the old key it would pay again.
        pay: async (request) => {
          paysAfterLoss++;
          return settlementDeps.rails.pay({ ...request, idempotencyKey: `${request.idempotencyKey}-forgotten` });
        },
      },
    };

    await rejection(payBatch(answerLost, caller, batch.id));
    const retried = await payBatch(forgetful, caller, batch.id);

    const transfers = await railTransfers('a', batch.id);
    expect(paysAfterLoss).toBe(0);
    expect(transfers).toEqual([expect.objectContaining({ status: 'paid' })]);
    expect(retried).toMatchObject({ status: 'sent', transferId: transfers[0]?.transfer_id });
  }, TEST_TIMEOUT_MS);

  it('records a payout an earlier attempt made even after the partner was suspended (the money has left; only new payouts are held)', async () => {
    const { partner, batch, caller } = await pendingBatchOfNewPartner();
    await rejection(payBatch(answerLost, caller, batch.id));
    expect((await suite.api.admin('PATCH', `/admin/partners/${partner.partnerId}`, { status: 'suspended' })).status).toBe(200);

    const recorded = await payBatch(settlementDeps, caller, batch.id);

    const transfers = await railTransfers('a', batch.id);
    expect(transfers).toEqual([expect.objectContaining({ status: 'paid' })]);
    expect(recorded).toMatchObject({ status: 'sent', transferId: transfers[0]?.transfer_id });
  }, TEST_TIMEOUT_MS);

  it('holds the batch while the dead attempt`s claim lasts (409 in progress), then a retry claims it, and the rail answers the same transfer', async () => {
    const { batch, caller } = await pendingBatchOfNewPartner();
    const diesAfterPaying: SettlementDeps = {
      ...settlementDeps,
      settlements: {
        ...settlementDeps.settlements,
        recordPayoutSent: async () => {
          throw new Error('the process died before recording the payout');
        },
      },
    };
    const later = (minutes: number): SettlementDeps => ({ ...settlementDeps, now: () => new Date(Date.now() + minutes * 60_000) });

    const died = await rejection(payBatch(diesAfterPaying, caller, batch.id));
    const held = await getBatch(batch.id);
    const whileHeld = await rejection(payBatch(settlementDeps, caller, batch.id));
    const afterLease = await payBatch(later(5), caller, batch.id);

    expect((died as Error).message).toBe('the process died before recording the payout');
    expect(held).toMatchObject({ status: 'pending', payoutAttempts: 1 });
    expect(held?.payoutClaim).not.toBeNull();
    expect((whileHeld as ServiceError).code).toBe('BATCH_PAYOUT_IN_PROGRESS');
    const transfers = await railTransfers('a', batch.id);
    expect(transfers).toEqual([expect.objectContaining({ status: 'paid' })]);
    expect(afterLease).toMatchObject({ status: 'sent', transferId: transfers[0]?.transfer_id });
    expect(await getBatch(batch.id)).toMatchObject({ status: 'sent', payoutAttempts: 2, payoutClaim: null });
  }, TEST_TIMEOUT_MS);
});

/** The settlement deps with "every partner" meaning these only: the table is shared with other test files running at the same time. */
/** The continuations the runs sent (a queue that keeps them). */
const continued: RunContinuation[] = [];

const onlyPartners = (partnerIds: string[]): SettlementDeps => ({
  ...settlementDeps,
  continuations: keepingContinuations(continued),
  partners: {
    ...settlementDeps.partners,
    allPartnerIds: async function* () {
      yield* partnerIds;
    },
  },
});

describe('the scheduled run', () => {
  it('settles every partner it is given, like POST /settlements/run for each', async () => {
    const partners = [await suite.api.createPartner(), await suite.api.createPartner()];
    for (const partner of partners) {
      const clientId = await suite.api.createClient(partner);
      await transactionIn(suite.api, { partnerId: partner.partnerId, clientId }, { amountMinor: 999, currency: 'CHF' });
    }
    const handler = scheduledRun(onlyPartners(partners.map((partner) => partner.partnerId)));

    const result = await handler({ 'detail-type': 'Scheduled Event' }, { getRemainingTimeInMillis: () => 60_000 });
    const again = await handler({ 'detail-type': 'Scheduled Event' }, { getRemainingTimeInMillis: () => 60_000 });

    expect(result).toEqual({ created_batches: 2, continuing: false });
    expect(again).toEqual({ created_batches: 0, continuing: false });
  }, TEST_TIMEOUT_MS);

  it('starts no batch write with too little time left: the work goes on in a continuation', async () => {
    const partner = await suite.api.createPartner();
    const clientId = await suite.api.createClient(partner);
    await transactionIn(suite.api, { partnerId: partner.partnerId, clientId }, { amountMinor: 999, currency: 'CHF' });
    const handler = scheduledRun(onlyPartners([partner.partnerId]));

    const sentBefore = continued.length;
    const starved = await handler({}, { getRemainingTimeInMillis: () => 4_000 });
    const roomy = await handler({}, { getRemainingTimeInMillis: () => 60_000 });

    expect(starved).toEqual({ created_batches: 0, continuing: true });
    expect(continued.slice(sentBefore)).toEqual([{ scope: {}, cutoff: expect.any(String), attempt: 1 }]);
    expect(roomy).toEqual({ created_batches: 1, continuing: false });
  }, TEST_TIMEOUT_MS);
});

describe('a backlog larger than one run reads', () => {
  it('settles the oldest part and leaves the rest waiting for the next run, each transaction in one batch', async () => {
    const partner = await suite.api.createPartner();
    const clientId = await suite.api.createClient(partner);
    const noon = Date.parse(yesterday());
    for (let i = 0; i < 5; i++) {
      const createdAt = new Date(noon + i * 60_000).toISOString();
      await transactionIn(suite.api, { partnerId: partner.partnerId, clientId }, { amountMinor: 1000 + i, currency: 'USD' }, { createdAt });
    }
    const readingThree: SettlementDeps = {
      ...settlementDeps,
      settlements: { ...settlementDeps.settlements, listWaiting: (partnerId, client, cutoff) => listWaiting(partnerId, client, cutoff, 3) },
    };

    const first = await runSettlement(readingThree, { partnerId: partner.partnerId });
    const second = await runSettlement(readingThree, { partnerId: partner.partnerId });
    const third = await runSettlement(readingThree, { partnerId: partner.partnerId });

    // Reading stopped after three entries, inside the merchant's one group: the run settles its oldest payments up to
    // the last one it read (whose entries may go on past the cut), and the next run reads the rest whole.
    expect(first.map((batch) => batch.lineCount)).toEqual([2]);
    expect(second.map((batch) => batch.lineCount)).toEqual([3]);
    expect(third).toEqual([]);
    expect(first[0]?.totals.grossMinor).toBe(1000 + 1001);
    expect(second[0]?.totals.grossMinor).toBe(1002 + 1003 + 1004);
  }, TEST_TIMEOUT_MS);
});
