/**
 * The settlement run's handling of its store's answers, with the store faked: lines taken by another run, writes
 * cancelled by concurrent writers (DynamoDB's TransactionConflict, which DynamoDB Local never produces), and a
 * failure of one batch or one partner, which must not lose the rest of the run.
 */
import { describe, expect, it } from '@jest/globals';
import { currencyCode } from '../../../lib/domain/money';
import type { SettlementBatch, SettlementItem } from '../../../lib/domain/settlement';
import type { BatchWrite, WaitingRead } from '../../../lib/use-cases/ports/settlement-store';
import { runSettlement, type SettlementDeps } from '../../../lib/use-cases/settlements';

const line = (n: number, clientId = 'shop-1'): SettlementItem => ({
  type: 'transaction',
  key: 'sale',
  cause: `pi_${n}`,
  svcTxId: `svc_tx_${n}`,
  partnerId: 'ptr_a',
  clientId,
  partnerReference: `order-${n}`,
  currency: currencyCode('EUR'),
  txCreatedAt: `2026-11-01T00:00:${String(n).padStart(2, '0')}.000Z`,
  createdAt: `2026-11-01T00:00:${String(n).padStart(2, '0')}.000Z`,
  grossMinor: 1000,
  processorFeeMinor: 29,
  platformFeeMinor: 30,
  svcEarningMinor: 15,
  netMinor: 941,
  settlesTransaction: true,
});

/** A refund entry of payment `n` reversing `grossMinor` of it (processor and platform fees reversed 3 % each). */
const refundLine = (n: number, grossMinor: number, clientId = 'shop-1'): SettlementItem => ({
  ...line(n, clientId),
  type: 'refund',
  key: `refund#${String(grossMinor).padStart(12, '0')}`,
  cause: `re_${n}`,
  createdAt: '2026-11-02T00:00:00.000Z',
  grossMinor: -grossMinor,
  processorFeeMinor: -Math.round(grossMinor * 0.03),
  platformFeeMinor: -Math.round(grossMinor * 0.03),
  svcEarningMinor: 0,
  netMinor: -(grossMinor - 2 * Math.round(grossMinor * 0.03)),
  settlesTransaction: false,
});

/** Deps whose store answers each createBatch with the next of `answers` (then `created`), recording the batches. */
function depsWith(waiting: Record<string, SettlementItem[]>, answers: Array<BatchWrite | Error | ((batch: SettlementBatch) => BatchWrite)>) {
  const written: SettlementBatch[] = [];
  const attempts: SettlementBatch[] = [];
  const deps = {
    settlements: {
      listWaiting: async (partnerId: string): Promise<WaitingRead> => {
        const items = waiting[partnerId];
        if (items === undefined) throw new Error(`listing ${partnerId} failed`);
        return { items, withoutFees: [] };
      },
      createBatch: async (batch: SettlementBatch): Promise<BatchWrite> => {
        attempts.push(batch);
        const answer = answers.shift() ?? { outcome: 'created' };
        if (answer instanceof Error) throw answer;
        const result = typeof answer === 'function' ? answer(batch) : answer;
        if (result.outcome === 'created') written.push(batch);
        return result;
      },
    },
    partners: {
      allPartnerIds: async function* () {
        yield* Object.keys(waiting).concat(['ptr_broken']);
      },
    },
    cutoff: 'now',
    now: () => new Date('2026-11-23T10:00:00.000Z'),
  } as unknown as SettlementDeps;
  return { deps, written, attempts };
}

describe('runSettlement', () => {
  it('tries again a batch whose write other writers kept cancelling, with the same lines', async () => {
    const { deps, written, attempts } = depsWith({ ptr_a: [line(1), line(2)] }, [{ outcome: 'contended' }, { outcome: 'contended' }]);

    const created = await runSettlement(deps, { partnerId: 'ptr_a' });

    expect(attempts).toHaveLength(3);
    expect(attempts.map((batch) => batch.lines.map((l) => l.svcTxId))).toEqual([
      ['svc_tx_1', 'svc_tx_2'],
      ['svc_tx_1', 'svc_tx_2'],
      ['svc_tx_1', 'svc_tx_2'],
    ]);
    expect(created).toEqual(written);
    expect(created).toHaveLength(1);
  });

  it('leaves a batch that stays contended for the next run after a bounded number of tries, a failure of the run (503 when nothing was made)', async () => {
    const { deps, attempts } = depsWith({ ptr_a: [line(1)] }, Array.from({ length: 50 }, () => ({ outcome: 'contended' }) as const));

    const run = runSettlement(deps, { partnerId: 'ptr_a' });

    await expect(run).rejects.toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
    expect(attempts).toHaveLength(5);
  });

  it('answers the batches it made when another stayed contended', async () => {
    const contendedForShop1 = (batch: SettlementBatch): BatchWrite => (batch.clientId === 'shop-1' ? { outcome: 'contended' } : { outcome: 'created' });
    const { deps } = depsWith({ ptr_a: [line(1, 'shop-1'), line(2, 'shop-2')] }, Array.from({ length: 50 }, () => contendedForShop1));

    const created = await runSettlement(deps, { partnerId: 'ptr_a' });

    expect(created.map((batch) => batch.clientId)).toEqual(['shop-2']);
  });

  it('keeps what it made when the list of partners fails part-way', async () => {
    const { deps } = depsWith({ ptr_a: [line(1)] }, []);
    deps.partners.allPartnerIds = async function* () {
      yield 'ptr_a';
      throw new Error('partner page read failed');
    };

    const created = await runSettlement(deps, {});

    expect(created).toHaveLength(1);
  });

  it('plans a batch again without the lines another run took, and totals what is left', async () => {
    const { deps } = depsWith({ ptr_a: [line(1), line(2), line(3)] }, [(batch) => ({ outcome: 'taken', taken: [batch.lines[1] as SettlementItem] })]);

    const [batch] = await runSettlement(deps, { partnerId: 'ptr_a' });

    expect(batch?.lines.map((l) => l.svcTxId)).toEqual(['svc_tx_1', 'svc_tx_3']);
    expect(batch?.totals).toEqual({ grossMinor: 2000, processorFeesMinor: 58, platformFeesMinor: 60, netMinor: 1882 });
  });

  it('settles a refund of a sale not yet settled in the same batch as its sale: nothing is held back', async () => {
    const { deps, written } = depsWith({ ptr_a: [refundLine(1, 400), line(2), line(1)] }, []);

    const created = await runSettlement(deps, { partnerId: 'ptr_a' });

    expect(created).toEqual(written);
    expect(created.map((batch) => batch.lines.map((l) => `${l.svcTxId}#${l.key}`))).toEqual([['svc_tx_1#sale', 'svc_tx_1#refund#000000000400', 'svc_tx_2#sale']]);
    expect(created[0]?.totals).toEqual({ grossMinor: 1600, processorFeesMinor: 46, platformFeesMinor: 48, netMinor: 1506 });
  });

  it('makes no batch for a merchant whose waiting entries net below zero (it owes), and settles the partner`s other merchants', async () => {
    const { deps, attempts } = depsWith({ ptr_a: [line(1, 'shop-1'), refundLine(0, 2000, 'shop-1'), line(2, 'shop-2')] }, []);

    const created = await runSettlement(deps, { partnerId: 'ptr_a' });

    expect(attempts.map((batch) => batch.clientId)).toEqual(['shop-2']);
    expect(created.map((batch) => batch.clientId)).toEqual(['shop-2']);
  });

  it('answers an empty run, not a failure, when the only merchant owes', async () => {
    const { deps, attempts } = depsWith({ ptr_a: [line(1), refundLine(0, 2000)] }, []);

    await expect(runSettlement(deps, { partnerId: 'ptr_a' })).resolves.toEqual([]);
    expect(attempts).toEqual([]);
  });

  it('writes no batch when what another run left of it no longer nets above zero', async () => {
    const { deps, attempts } = depsWith({ ptr_a: [refundLine(0, 1500), line(1), line(2)] }, [(batch) => ({ outcome: 'taken', taken: batch.lines.filter((l) => l.svcTxId === 'svc_tx_2') })]);

    const created = await runSettlement(deps, { partnerId: 'ptr_a' });

    // 941 + 941 - 1,410 = 472 planned; without svc_tx_2, 941 - 1,410 < 0: the merchant owes, nothing is written.
    expect(attempts.map((batch) => batch.totals.netMinor)).toEqual([472]);
    expect(created).toEqual([]);
  });

  it('keeps the batches it made when another batch`s write or another partner`s read fails', async () => {
    const { deps } = depsWith({ ptr_a: [line(1, 'shop-1'), line(2, 'shop-2'), line(3, 'shop-3')] }, [new Error('write failed')]);

    const created = await runSettlement(deps, {});

    expect(created.map((batch) => batch.clientId).sort()).toEqual(['shop-2', 'shop-3']);
  });

  it('fails as a whole only when nothing was made (a table that is down is a 503, not "nothing to settle")', async () => {
    const down = new Error('table unavailable');
    const { deps } = depsWith({ ptr_a: [line(1)] }, [down]);

    await expect(runSettlement(deps, { partnerId: 'ptr_a' })).rejects.toBe(down);
  });
});
