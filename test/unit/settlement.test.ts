/** Settlement planning: grouping, the 99-item bound, exact totals, adjustments deducted but never below zero. */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { currencyCode } from '../../lib/domain/money';
import { MAX_ITEMS_PER_BATCH, planBatches, totalsOf, type SettlementItem } from '../../lib/domain/settlement';

const transaction = (n: number, overrides: Partial<SettlementItem> = {}): SettlementItem => ({
  kind: 'transaction',
  reversal: null,
  svcTxId: `svc_tx_${String(n).padStart(24, '0')}`,
  partnerId: 'ptr_a',
  clientId: 'shop-1',
  partnerReference: `order-${n}`,
  currency: currencyCode('EUR'),
  createdAt: new Date(Date.UTC(2026, 10, 1) + n * 1000).toISOString(),
  grossMinor: 1000,
  processorFeeMinor: 29,
  platformFeeMinor: 30,
  netMinor: 941,
  ...overrides,
});

const adjustment = (n: number, netMinor: number, overrides: Partial<SettlementItem> = {}): SettlementItem => ({
  ...transaction(n, overrides),
  kind: 'adjustment',
  reversal: 'refund',
  grossMinor: netMinor - 59,
  processorFeeMinor: -29,
  platformFeeMinor: -30,
  netMinor,
});

const item = fc
  .record({
    adjustment: fc.boolean(),
    partner: fc.constantFrom('ptr_a', 'ptr_b'),
    client: fc.constantFrom('shop-1', 'shop-2'),
    currency: fc.constantFrom('EUR', 'JPY'),
    age: fc.integer({ min: 0, max: 1_000_000 }),
    net: fc.integer({ min: 0, max: 99_999_999 }),
  })
  .map((spec): Omit<SettlementItem, 'svcTxId'> => ({
    kind: spec.adjustment ? 'adjustment' : 'transaction',
    reversal: spec.adjustment ? 'chargeback' : null,
    partnerId: spec.partner,
    partnerReference: 'order',
    clientId: spec.client,
    currency: currencyCode(spec.currency),
    createdAt: new Date(Date.UTC(2026, 0, 1) + spec.age * 1000).toISOString(),
    grossMinor: spec.adjustment ? -spec.net - 2 : spec.net + 2,
    processorFeeMinor: spec.adjustment ? -1 : 1,
    platformFeeMinor: spec.adjustment ? -1 : 1,
    netMinor: spec.adjustment ? -spec.net : spec.net,
  }));
const waiting = fc.array(item, { maxLength: 400 }).map((items) => items.map((it, i) => ({ ...it, svcTxId: `svc_tx_${i}` })));

const groupOf = (it: Pick<SettlementItem, 'partnerId' | 'clientId' | 'currency'>) => `${it.partnerId}|${it.clientId}|${it.currency}`;

describe('planBatches', () => {
  it('puts every transaction in exactly one batch of its own partner, client and currency, at most 99 items each', () => {
    fc.assert(
      fc.property(waiting, (items) => {
        const batches = planBatches(items);
        const placed = batches.flatMap((batch) => batch.items.map((it) => it.svcTxId));

        expect(new Set(placed).size).toBe(placed.length);
        expect(new Set(placed)).toEqual(new Set([...placed, ...items.filter((it) => it.kind === 'transaction').map((it) => it.svcTxId)]));
        for (const batch of batches) {
          expect(batch.items.length).toBeGreaterThan(0);
          expect(batch.items.length).toBeLessThanOrEqual(MAX_ITEMS_PER_BATCH);
          for (const it of batch.items) expect(groupOf(it)).toBe(groupOf(batch));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('totals each batch exactly, never pays a negative net, and deducts adjustments oldest first', () => {
    fc.assert(
      fc.property(waiting, (items) => {
        const batches = planBatches(items);
        const placed = new Set(batches.flatMap((batch) => batch.items.map((it) => it.svcTxId)));

        for (const batch of batches) {
          const sum = (pick: (it: SettlementItem) => number) => batch.items.reduce((total, it) => total + pick(it), 0);
          expect(batch.totals).toEqual({
            grossMinor: sum((it) => it.grossMinor),
            processorFeesMinor: sum((it) => it.processorFeeMinor),
            platformFeesMinor: sum((it) => it.platformFeeMinor),
            netMinor: sum((it) => it.netMinor),
          });
          expect(batch.totals.netMinor).toBeGreaterThanOrEqual(0);
        }
        // What waits of a group's adjustments is the newest part: none taken after one left behind.
        for (const group of new Set(items.map(groupOf))) {
          const adjustments = items.filter((it) => it.kind === 'adjustment' && groupOf(it) === group).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.svcTxId.localeCompare(b.svcTxId));
          const taken = adjustments.map((it) => placed.has(it.svcTxId));
          expect(taken).toEqual([...taken].sort((a, b) => Number(b) - Number(a)));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('splits 250 transactions of one client into batches of 99, 99 and 52, oldest first', () => {
    const items = Array.from({ length: 250 }, (_, n) => transaction(249 - n));

    const batches = planBatches(items);

    expect(batches.map((batch) => batch.items.length)).toEqual([99, 99, 52]);
    expect(batches[0]?.items[0]?.svcTxId).toBe(transaction(0).svcTxId);
    expect(batches[2]?.totals).toEqual(totalsOf(Array.from({ length: 52 }, (_, n) => transaction(n))));
  });

  it('deducts a refund of a settled transaction from the next batch, and keeps one that would make it negative waiting', () => {
    const items = [transaction(1), transaction(2), adjustment(3, -941), adjustment(4, -2000), adjustment(5, -100)];

    const [batch, ...rest] = planBatches(items);

    expect(rest).toEqual([]);
    expect(batch?.items.map((it) => it.svcTxId)).toEqual([1, 2, 3].map((n) => transaction(n).svcTxId));
    expect(batch?.totals).toEqual({ grossMinor: 1000, processorFeesMinor: 29, platformFeesMinor: 30, netMinor: 941 });
  });

  it('makes no batch of adjustments alone: with nothing to deduct them from, they wait', () => {
    expect(planBatches([adjustment(1, -500), adjustment(2, -10, { currency: currencyCode('JPY') })])).toEqual([]);
  });
});
