/**
 * Settlement planning (decisions.md §5a, §7): grouping, the bound on a batch's lines (10,000, or a small one passed
 * in to exercise the splitting), exact totals, reversals netted in the first batch of a group and never below zero,
 * and no batch at all for a merchant whose waiting entries net to zero or less.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { EntryType } from '../../../lib/domain/ledger';
import { currencyCode } from '../../../lib/domain/money';
import { type BatchLimits, MAX_LINES_PER_BATCH, planBatches, totalsOf, type PlannedBatch, type SettlementItem, type SettlementPlan } from '../../../lib/domain/settlement';
import { BATCH_LIMITS, batchReportCsv, MAX_REPORT_BYTES, reportRowBytes } from '../../../lib/domain/settlement-report';
import { seedFrom } from '../../support/seeds';

const at = (seconds: number) => new Date(Date.UTC(2026, 10, 1) + seconds * 1000).toISOString();

/** The sale of payment `n`, still `succeeded` (so its batch pays the transaction). */
const sale = (n: number, overrides: Partial<SettlementItem> = {}): SettlementItem => ({
  type: 'transaction',
  key: 'sale',
  cause: `pi_${n}`,
  svcTxId: `svc_tx_${String(n).padStart(24, '0')}`,
  partnerId: 'ptr_a',
  clientId: 'shop-1',
  partnerReference: `order-${n}`,
  currency: currencyCode('EUR'),
  txCreatedAt: at(n),
  createdAt: at(n),
  grossMinor: 1000,
  processorFeeMinor: 29,
  platformFeeMinor: 30,
  svcEarningMinor: 15,
  netMinor: 941,
  settlesTransaction: true,
  ...overrides,
});

/** A reversal entry of payment `n` (a refund unless `type` says otherwise), written an hour after the payment. */
const reversal = (n: number, netMinor: number, overrides: Partial<SettlementItem> = {}): SettlementItem => ({
  ...sale(n),
  type: 'refund',
  key: `refund#${String(-netMinor).padStart(12, '0')}`,
  cause: `re_${n}`,
  createdAt: at(n + 3600),
  grossMinor: netMinor - 59,
  processorFeeMinor: -29,
  platformFeeMinor: -30,
  svcEarningMinor: -15,
  netMinor,
  settlesTransaction: false,
  ...overrides,
});

const entryId = (it: Pick<SettlementItem, 'svcTxId' | 'key'>) => `${it.svcTxId}#${it.key}`;
const groupOf = (it: Pick<SettlementItem, 'partnerId' | 'clientId' | 'currency'>) => `${it.partnerId}|${it.clientId}|${it.currency}`;
const netOf = (items: readonly SettlementItem[]) => items.reduce((sum, it) => sum + it.netMinor, 0);
/** The order the ledger settles in, written out by hand: oldest payment first, its sale, then its reversals by key. */
const ledgerOrder = (a: SettlementItem, b: SettlementItem) =>
  a.txCreatedAt < b.txCreatedAt ? -1 : a.txCreatedAt > b.txCreatedAt ? 1 : a.svcTxId < b.svcTxId ? -1 : a.svcTxId > b.svcTxId ? 1 : rank(a) - rank(b) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
const rank = (it: SettlementItem) => (it.type === 'transaction' ? 0 : 1);

/**
 * What waits in a store: payments of two partners, two clients and two currencies (mostly one group, so that it
 * takes several batches), each with its sale (waiting, or settled earlier and so absent) and up to three reversal
 * entries. Reversals are negative, except a dispute reinstatement; a sale may be of zero net (a payment whose
 * fees took it all). Each run scales the reversals anew, so that groups net above zero as often as below.
 */
const REVERSAL_TYPES: readonly Exclude<EntryType, 'transaction'>[] = ['refund', 'chargeback', 'dispute_fee', 'dispute_reinstated'];
const mostly = <T>(usual: T, other: T) => fc.oneof({ arbitrary: fc.constant(usual), weight: 4 }, { arbitrary: fc.constant(other), weight: 1 });
/** One payment; not shrunk itself (a failure shrinks by dropping payments, which stays quick at this size). */
const payment = fc.noShrink(
  fc.record({
    partner: mostly('ptr_a', 'ptr_b'),
    client: mostly('shop-1', 'shop-2'),
    currency: mostly('EUR', 'JPY'),
    age: fc.integer({ min: 0, max: 1_000_000 }),
    saleWaiting: fc.boolean(),
    saleReversed: fc.boolean(),
    net: fc.integer({ min: 0, max: 99_999_999 }),
    /** Each reversal's net, in thousandths of the run's largest. */
    reversals: fc.array(fc.record({ type: fc.constantFrom(...REVERSAL_TYPES), share: fc.integer({ min: 0, max: 1000 }), delay: fc.integer({ min: 0, max: 1_000_000 }) }), { maxLength: 3 }),
  }),
);
const waiting = fc.tuple(fc.integer({ min: 0, max: 99_999_999 }), fc.array(payment, { maxLength: 400, size: 'max' })).map(([reversalMax, payments]) =>
  payments.flatMap((spec, i): SettlementItem[] => {
    const common = {
      svcTxId: `svc_tx_${i}`,
      partnerId: spec.partner,
      clientId: spec.client,
      partnerReference: 'order',
      currency: currencyCode(spec.currency),
      txCreatedAt: at(spec.age),
      svcEarningMinor: 0,
    };
    const entries: SettlementItem[] = spec.reversals.map((rev, r) => {
      const size = Math.floor((reversalMax * rev.share) / 1000);
      const net = rev.type === 'dispute_reinstated' ? size : 0 - size;
      const fee = rev.type === 'dispute_reinstated' ? 1 : -1;
      return { ...common, type: rev.type, key: `${rev.type}#${r}`, cause: `re_${i}_${r}`, createdAt: at(spec.age + rev.delay), grossMinor: net + 2 * fee, processorFeeMinor: fee, platformFeeMinor: fee, netMinor: net, settlesTransaction: false };
    });
    if (spec.saleWaiting) {
      entries.push({ ...common, type: 'transaction', key: 'sale', cause: `pi_${i}`, createdAt: at(spec.age), grossMinor: spec.net + 2, processorFeeMinor: 1, platformFeeMinor: 1, netMinor: spec.net, settlesTransaction: !spec.saleReversed });
    }
    return entries;
  }),
);

/** The waiting entries by group. */
function groups(items: readonly SettlementItem[]): Map<string, SettlementItem[]> {
  const byGroup = new Map<string, SettlementItem[]>();
  for (const it of items) {
    const group = byGroup.get(groupOf(it));
    if (group === undefined) byGroup.set(groupOf(it), [it]);
    else group.push(it);
  }
  return byGroup;
}

const placedIn = (batches: readonly PlannedBatch[]) => batches.flatMap((batch) => batch.items);

/** A plan per group (the order of groups is the store's listing order, which means nothing). */
const byGroup = (plan: SettlementPlan) =>
  Object.fromEntries(
    [...new Set([...plan.batches, ...plan.owing].map(groupOf))].map((group) => [
      group,
      { batches: plan.batches.filter((batch) => groupOf(batch) === group), owing: plan.owing.filter((it) => groupOf(it) === group) },
    ]),
  );

/** A fixed seed (SETTLEMENT_SEED replays another), so a failure reproduces. */
const SEED = seedFrom('SETTLEMENT_SEED', 27_112_026);

/**
 * What waits, and the bound on a batch's lines the properties plan with: small, so that groups take several batches.
 * Drawn against the largest group: often between its reversals and its size (it splits, with room for sales beside
 * its reversals), else anywhere up to its size (its reversals may fill a batch: it waits whole), or tiny (1 to 8).
 */
const planned = waiting.chain((items) => {
  const largest = [...groups(items).values()].reduce<SettlementItem[]>((most, group) => (group.length > most.length ? group : most), []);
  const size = Math.max(largest.length, 1);
  const debits = largest.filter((it) => it.netMinor < 0).length;
  const maxLines = fc.oneof(
    { arbitrary: fc.integer({ min: 1, max: 8 }), weight: 1 },
    { arbitrary: fc.integer({ min: 1, max: size }), weight: 2 },
    { arbitrary: fc.integer({ min: Math.min(debits + 1, size), max: size }), weight: 3 },
  );
  return fc.tuple(fc.constant(items), maxLines);
});

const RUNS = { numRuns: 100, seed: SEED };

/** Limits of `lines` lines and the default report bound (which the properties' short references never reach). */
const linesOnly = (lines: number): BatchLimits => ({ ...BATCH_LIMITS, lines });

const reportBytesOf = (items: readonly SettlementItem[]) => items.reduce((sum, it) => sum + reportRowBytes(it), 0);

/**
 * What waits, with a bound on a batch's report bytes small enough to split groups (and lines that never do): drawn
 * between the largest row and the largest group's report, each entry's reference of a random length (1 to 255).
 */
const plannedByBytes = waiting
  .chain((items) => fc.tuple(fc.constant(items), fc.array(fc.integer({ min: 1, max: 255 }), { minLength: items.length, maxLength: items.length })))
  .map(([items, lengths]) => items.map((it, i) => ({ ...it, partnerReference: `"ref,${'é'.repeat(lengths[i] ?? 1)}` })))
  .chain((items) => {
    const largest = [...groups(items).values()].reduce((most, group) => Math.max(most, reportBytesOf(group)), 0);
    const widest = items.reduce((most, it) => Math.max(most, reportRowBytes(it)), 0);
    return fc.tuple(fc.constant(items), fc.integer({ min: Math.max(widest, 1), max: Math.max(largest, widest, 1) }));
  });

describe('planBatches', () => {
  it('bounds every batch`s report by bytes as it does by lines: each within the bound, every batch of a split group full but its last, the group paid exactly its net', () => {
    let split = 0;
    fc.assert(
      fc.property(plannedByBytes, ([items, reportBytes]) => {
        const plan = planBatches(items, { ...BATCH_LIMITS, reportBytes });
        const placed = placedIn(plan.batches).map(entryId);
        expect(new Set(placed).size).toBe(placed.length);
        for (const batch of plan.batches) expect(reportBytesOf(batch.items)).toBeLessThanOrEqual(reportBytes);
        for (const [group, entries] of groups(items)) {
          const ofGroup = plan.batches.filter((batch) => groupOf(batch) === group);
          if (ofGroup.length === 0) continue;
          if (ofGroup.length > 1) split++;
          expect(ofGroup.map((batch) => batch.full)).toEqual(ofGroup.map((_, n) => n < ofGroup.length - 1));
          expect(ofGroup.reduce((sum, batch) => sum + batch.totals.netMinor, 0)).toBe(netOf(entries));
          expect(ofGroup[0]!.totals.netMinor).toBeGreaterThan(0);
          expect(ofGroup.filter((batch) => batch.totals.netMinor < 0)).toEqual([]);
          // Whichever batch is made first, every reversal is in the first.
          expect(ofGroup.slice(1).flatMap((batch) => batch.items).filter((it) => it.netMinor < 0)).toEqual([]);
        }
      }),
      RUNS,
    );
    expect(split).toBeGreaterThan(20);
  });

  it('splits 10,000 sales whose references are 255 quotes into batches whose reports each fit in one Lambda response', () => {
    // Arrange: the largest rows a partner can make (a `"` is doubled in CSV, then escaped in the response's JSON)
    const items = Array.from({ length: MAX_LINES_PER_BATCH }, (_, n) => sale(n, { partnerReference: '"'.repeat(255) }));

    const { batches } = planBatches(items, BATCH_LIMITS);

    expect(batches.length).toBeGreaterThan(1);
    expect(batches.reduce((sum, batch) => sum + batch.items.length, 0)).toBe(MAX_LINES_PER_BATCH);
    for (const batch of batches) {
      const report = batchReportCsv(batch, batch.items);
      expect(new TextEncoder().encode(JSON.stringify(report)).length).toBeLessThan(MAX_REPORT_BYTES + 1_000);
    }
  });

  it('makes the properties below meaningful: their draws hold groups split into several batches (with reversals, some filled by the largest sales) and groups whose reversals fit no batch', () => {
    // What the seeded draws of the properties hold; a change to the generator that made them trivial fails here.
    let split = 0;
    let splitWithReversals = 0;
    let splitOnFallback = 0;
    let unplaceable = 0;
    fc.assert(
      fc.property(planned, ([items, maxLines]) => {
        const plan = planBatches(items, linesOnly(maxLines));
        for (const [group, entries] of groups(items)) {
          const ofGroup = plan.batches.filter((batch) => groupOf(batch) === group);
          if (ofGroup.length > 1) {
            split++;
            const debits = entries.filter((it) => it.netMinor < 0);
            if (debits.length > 0) splitWithReversals++;
            const oldest = entries.filter((it) => it.netMinor >= 0).sort(ledgerOrder).slice(0, maxLines - debits.length);
            if (netOf([...debits, ...oldest]) <= 0) splitOnFallback++;
          }
        }
        unplaceable += plan.unplaceable.length;
      }),
      RUNS,
    );
    expect(split).toBeGreaterThan(20);
    expect(splitWithReversals).toBeGreaterThan(10);
    expect(splitOnFallback).toBeGreaterThan(0);
    expect(unplaceable).toBeGreaterThan(5);
  });

  it('puts every entry in at most one batch of its own partner, client and currency, at most maxLines each, and every sale of a group that nets above zero', () => {
    fc.assert(
      fc.property(planned, ([items, maxLines]) => {
        const { batches, unplaceable } = planBatches(items, linesOnly(maxLines));
        const placed = placedIn(batches).map(entryId);
        const itemIds = new Set(items.map(entryId));
        const placedIds = new Set(placed);

        expect(placedIds.size).toBe(placed.length);
        expect(placed.filter((id) => !itemIds.has(id))).toEqual([]);
        for (const batch of batches) {
          expect(batch.items.length).toBeGreaterThan(0);
          expect(batch.items.length).toBeLessThanOrEqual(maxLines);
          expect(batch.items.filter((it) => groupOf(it) !== groupOf(batch))).toEqual([]);
        }
        // A group that nets above zero has every non-negative entry (its sales, its reinstatements) settled, unless
        // its reversals fit no batch (it then waits whole); one that nets to zero or less has nothing settled.
        for (const group of groups(items).values()) {
          const waitsWhole = unplaceable.some((it) => groupOf(it) === groupOf(group[0] as SettlementItem));
          if (netOf(group) > 0 && !waitsWhole) expect(group.filter((it) => it.netMinor >= 0 && !placedIds.has(entryId(it)))).toEqual([]);
          else expect(group.filter((it) => placedIds.has(entryId(it)))).toEqual([]);
        }
      }),
      RUNS,
    );
  });

  it('totals each batch exactly and never pays a negative net', () => {
    fc.assert(
      fc.property(planned, ([items, maxLines]) => {
        const { batches } = planBatches(items, linesOnly(maxLines));

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
      }),
      RUNS,
    );
  });

  it('splits a group too large for one batch so: the first listed holds every reversal and is full, the others only sales and reinstatements, maxLines each in ledger order but the last', () => {
    fc.assert(
      fc.property(planned, ([items, maxLines]) => {
        const { batches } = planBatches(items, linesOnly(maxLines));

        for (const [group, entries] of groups(items)) {
          const ofGroup = batches.filter((batch) => groupOf(batch) === group);
          if (ofGroup.length < 2) continue;
          const [first, ...others] = ofGroup as [PlannedBatch, ...PlannedBatch[]];
          const debitIds = entries.filter((it) => it.netMinor < 0).map(entryId).sort();
          expect(first.items.filter((it) => it.netMinor < 0).map(entryId).sort()).toEqual(debitIds);
          expect(first.items).toHaveLength(maxLines);
          for (const batch of others) expect(batch.items.filter((it) => it.netMinor < 0)).toEqual([]);
          expect(others.slice(0, -1).map((batch) => batch.items.length)).toEqual(others.slice(0, -1).map(() => maxLines));
          // The sales after the first batch, taken maxLines at a time in ledger order: together they are in order.
          const rest = others.flatMap((batch) => batch.items);
          expect(rest).toEqual([...rest].sort(ledgerOrder));
        }
      }),
      RUNS,
    );
  });

  it('fills the first batch of a split group with its oldest sales, or with its largest when the oldest do not cover its reversals', () => {
    fc.assert(
      fc.property(planned, ([items, maxLines]) => {
        const { batches } = planBatches(items, linesOnly(maxLines));

        for (const [group, entries] of groups(items)) {
          const ofGroup = batches.filter((batch) => groupOf(batch) === group);
          if (ofGroup.length < 2) continue;
          const debits = entries.filter((it) => it.netMinor < 0);
          const credits = entries.filter((it) => it.netMinor >= 0).sort(ledgerOrder);
          const oldest = credits.slice(0, maxLines - debits.length);
          const firstCredits = (ofGroup[0] as PlannedBatch).items.filter((it) => it.netMinor >= 0);
          if (netOf([...debits, ...oldest]) > 0) {
            expect(firstCredits.map(entryId)).toEqual(oldest.map(entryId));
          } else {
            // The largest: none left out nets more than the smallest taken.
            const taken = new Set(firstCredits.map(entryId));
            const smallestTaken = Math.min(...firstCredits.map((it) => it.netMinor));
            expect(credits.filter((it) => !taken.has(entryId(it)) && it.netMinor > smallestTaken)).toEqual([]);
          }
        }
      }),
      RUNS,
    );
  });

  it('lets a group that nets above zero wait whole only when its reversals fill a batch, or outweigh the largest sales a batch has room for', () => {
    fc.assert(
      fc.property(planned, ([items, maxLines]) => {
        const plan = planBatches(items, linesOnly(maxLines));

        for (const [group, entries] of groups(items)) {
          const waits = plan.unplaceable.filter((it) => groupOf(it) === group);
          const debits = entries.filter((it) => it.netMinor < 0);
          const room = maxLines - debits.length;
          const largest = entries
            .filter((it) => it.netMinor >= 0)
            .map((it) => it.netMinor)
            .sort((a, b) => b - a)
            .slice(0, Math.max(room, 0));
          const coverable = room > 0 && netOf(debits) + largest.reduce((sum, net) => sum + net, 0) > 0;
          const expected = netOf(entries) > 0 && entries.length > maxLines && !coverable;
          expect(waits).toEqual(expected ? [{ partnerId: entries[0]?.partnerId, clientId: entries[0]?.clientId, currency: entries[0]?.currency, entries: entries.length }] : []);
        }
      }),
      RUNS,
    );
  });

  it('settles a group of at most maxLines entries that nets above zero whole, in one batch paying exactly its net', () => {
    fc.assert(
      fc.property(planned, ([items, maxLines]) => {
        const { batches } = planBatches(items, linesOnly(maxLines));

        for (const [group, entries] of groups(items)) {
          if (netOf(entries) <= 0 || entries.length > maxLines) continue;
          const ofGroup = batches.filter((batch) => groupOf(batch) === group);
          expect(ofGroup).toHaveLength(1);
          expect(ofGroup[0]?.items.map(entryId).sort()).toEqual(entries.map(entryId).sort());
          expect(ofGroup[0]?.totals).toEqual(totalsOf(entries));
        }
      }),
      RUNS,
    );
  });

  it('settles every group of the default bound (10,000 lines) that nets above zero in one batch', () => {
    fc.assert(
      fc.property(waiting, (items) => {
        const { batches, unplaceable } = planBatches(items, BATCH_LIMITS);

        expect(unplaceable).toEqual([]);
        for (const [group, entries] of groups(items)) {
          const ofGroup = batches.filter((batch) => groupOf(batch) === group);
          expect(ofGroup.map((batch) => batch.items.length)).toEqual(netOf(entries) > 0 ? [entries.length] : []);
        }
      }),
      RUNS,
    );
  });

  it('lists every group that nets below zero as owing its shortfall since its oldest waiting reversal, and no other', () => {
    fc.assert(
      fc.property(planned, ([items, maxLines]) => {
        const { owing } = planBatches(items, linesOnly(maxLines));

        const expected = [...groups(items).values()]
          .filter((entries) => netOf(entries) < 0)
          .map((entries) => ({
            group: groupOf(entries[0] as SettlementItem),
            owedMinor: -netOf(entries),
            since: entries.filter((it) => it.netMinor < 0).map((it) => it.createdAt).sort()[0],
          }));
        const actual = owing.map((it) => ({ group: groupOf(it), owedMinor: it.owedMinor, since: it.since }));
        expect(new Set(actual.map((it) => it.group)).size).toBe(actual.length);
        expect(actual.sort((a, b) => a.group.localeCompare(b.group))).toEqual(expected.sort((a, b) => a.group.localeCompare(b.group)));
      }),
      RUNS,
    );
  });

  it('lists each batch`s entries in ledger order, and plans the same whatever order the store lists the entries in', () => {
    fc.assert(
      fc.property(
        planned.chain(([items, maxLines]) => fc.tuple(fc.constant(items), fc.shuffledSubarray(items, { minLength: items.length, maxLength: items.length }), fc.constant(maxLines))),
        ([items, shuffled, maxLines]) => {
          const plan = planBatches(items, linesOnly(maxLines));

          for (const batch of plan.batches) expect(batch.items).toEqual([...batch.items].sort(ledgerOrder));
          expect(byGroup(planBatches(shuffled, linesOnly(maxLines)))).toEqual(byGroup(plan));
        },
      ),
      RUNS,
    );
  });

  it('pays a group exactly its net or nothing: its batches hold every entry of it, or none does (it owes, or its reversals fit no batch)', () => {
    fc.assert(
      fc.property(planned, ([items, maxLines]) => {
        const plan = planBatches(items, linesOnly(maxLines));

        for (const [group, entries] of groups(items)) {
          const ofGroup = plan.batches.filter((batch) => groupOf(batch) === group);
          const unplaceable = plan.unplaceable.some((it) => groupOf(it) === group);
          if (netOf(entries) > 0 && !unplaceable) {
            expect(placedIn(ofGroup).map(entryId).sort()).toEqual(entries.map(entryId).sort());
            expect(ofGroup.reduce((sum, batch) => sum + batch.totals.netMinor, 0)).toBe(netOf(entries));
            expect(ofGroup).toHaveLength(Math.ceil(entries.length / maxLines));
          } else {
            expect(ofGroup).toEqual([]);
          }
          expect(unplaceable && netOf(entries) <= 0).toBe(false);
        }
      }),
      RUNS,
    );
  });

  it('splits 250 sales of one client, at most 99 a batch, into 99 + 99 + 52 in ledger order that together pay all of them', () => {
    const items = Array.from({ length: 250 }, (_, n) => sale(249 - n));

    const { batches, owing, unplaceable } = planBatches(items, linesOnly(99));

    expect(owing).toEqual([]);
    expect(unplaceable).toEqual([]);
    expect(batches.map((batch) => batch.items.map((it) => it.svcTxId))).toEqual([
      Array.from({ length: 99 }, (_, n) => sale(n).svcTxId),
      Array.from({ length: 99 }, (_, n) => sale(99 + n).svcTxId),
      Array.from({ length: 52 }, (_, n) => sale(198 + n).svcTxId),
    ]);
    expect(batches.map((batch) => batch.totals.netMinor)).toEqual([99 * 941, 99 * 941, 52 * 941]);
  });

  it('settles 250 sales of one client in one batch at the default bound', () => {
    const items = Array.from({ length: 250 }, (_, n) => sale(249 - n));

    const { batches } = planBatches(items, BATCH_LIMITS);

    expect(MAX_LINES_PER_BATCH).toBe(10_000);
    expect(batches).toHaveLength(1);
    expect(batches[0]?.items.map((it) => it.svcTxId)).toEqual(Array.from({ length: 250 }, (_, n) => sale(n).svcTxId));
    expect(batches[0]?.totals).toEqual({ grossMinor: 250 * 1000, processorFeesMinor: 250 * 29, platformFeesMinor: 250 * 30, netMinor: 250 * 941 });
  });

  it('splits 25,000 sales of one client at the default bound into 10,000 + 10,000 + 5,000, oldest first', () => {
    const items = Array.from({ length: 25_000 }, (_, n) => sale(24_999 - n));

    const { batches, owing, unplaceable } = planBatches(items, BATCH_LIMITS);

    expect([owing, unplaceable]).toEqual([[], []]);
    expect(batches.map((batch) => batch.items.length)).toEqual([10_000, 10_000, 5_000]);
    expect(batches.map((batch) => [batch.items[0]?.svcTxId, batch.items.at(-1)?.svcTxId])).toEqual([
      [sale(0).svcTxId, sale(9_999).svcTxId],
      [sale(10_000).svcTxId, sale(19_999).svcTxId],
      [sale(20_000).svcTxId, sale(24_999).svcTxId],
    ]);
    expect(batches.map((batch) => batch.totals.netMinor)).toEqual([10_000 * 941, 10_000 * 941, 5_000 * 941]);
  });

  it('puts every reversal of a split group in its first batch, with the oldest sales, and only sales in the others', () => {
    // Arrange: 12 sales; a refund of payment 0 (settled earlier) and one of payment 10 (its sale still waits). 14 entries at 5 a batch.
    const items = [...Array.from({ length: 12 }, (_, n) => sale(12 - n)), reversal(10, -100), reversal(0, -941)];

    // Act
    const { batches, unplaceable } = planBatches(items, linesOnly(5));

    // Assert: the refunds and sales 1 to 3 (2,823 against 1,041), then sales 4 to 12 in order, 5 a batch.
    expect(unplaceable).toEqual([]);
    expect(batches.map((batch) => batch.items.map((it) => [it.svcTxId, it.type]))).toEqual([
      [[sale(0).svcTxId, 'refund'], [sale(1).svcTxId, 'transaction'], [sale(2).svcTxId, 'transaction'], [sale(3).svcTxId, 'transaction'], [sale(10).svcTxId, 'refund']],
      [4, 5, 6, 7, 8].map((n) => [sale(n).svcTxId, 'transaction']),
      [9, 10, 11, 12].map((n) => [sale(n).svcTxId, 'transaction']),
    ]);
    expect(batches.map((batch) => batch.totals.netMinor)).toEqual([3 * 941 - 941 - 100, 5 * 941, 4 * 941]);
  });

  it('fills the first batch with the largest sales when the oldest do not cover the reversals', () => {
    // Arrange: a refund of 1,500 against sales of 100, 100, 2,000 and 941, 3 entries a batch: the two oldest (200)
    // do not cover it, the two largest (2,941) do.
    const items = [reversal(0, -1500), sale(1, { netMinor: 100 }), sale(2, { netMinor: 100 }), sale(3, { netMinor: 2000 }), sale(4)];

    // Act
    const { batches, unplaceable } = planBatches(items, linesOnly(3));

    // Assert
    expect(unplaceable).toEqual([]);
    expect(batches.map((batch) => batch.items.map((it) => it.svcTxId))).toEqual([
      [0, 3, 4].map((n) => sale(n).svcTxId),
      [1, 2].map((n) => sale(n).svcTxId),
    ]);
    expect(batches.map((batch) => batch.totals.netMinor)).toEqual([2000 + 941 - 1500, 200]);
  });

  it('settles each payment`s reversals beside its sale (sale first, then by key): a partially refunded unsettled payment is paid its net less the refund', () => {
    // Arrange: payment 1 refunded in two steps before any settlement, payment 2 untouched.
    const items = [sale(2), reversal(1, -94, { key: 'refund#000000000200' }), sale(1), reversal(1, -47, { key: 'refund#000000000100' })];

    // Act
    const { batches, owing } = planBatches(items, BATCH_LIMITS);

    // Assert
    expect(owing).toEqual([]);
    expect(batches).toHaveLength(1);
    expect(batches[0]?.items.map((it) => [it.svcTxId, it.key])).toEqual([
      [sale(1).svcTxId, 'sale'],
      [sale(1).svcTxId, 'refund#000000000100'],
      [sale(1).svcTxId, 'refund#000000000200'],
      [sale(2).svcTxId, 'sale'],
    ]);
    expect(batches[0]?.totals.netMinor).toBe(941 - 47 - 94 + 941);
    expect(batches[0]?.totals).toEqual(totalsOf(items));
  });

  it('deducts reversals of earlier settled payments from the next batch, whole, placing one listed before the sales that cover it after them', () => {
    // Arrange: payments 1 and 2 were settled earlier (only their reversals wait); 3, 4 and 5 wait to be settled.
    const items = [sale(3), sale(4), sale(5), reversal(1, -941, { type: 'chargeback', key: 'chargeback#dp_1' }), reversal(2, -1500)];

    // Act
    const { batches, owing } = planBatches(items, BATCH_LIMITS);

    // Assert
    expect(owing).toEqual([]);
    expect(batches).toHaveLength(1);
    expect(batches[0]?.items.map((it) => it.svcTxId)).toEqual([1, 2, 3, 4, 5].map((n) => sale(n).svcTxId));
    expect(batches[0]?.totals).toEqual({ grossMinor: 3000 - 1000 - 1559, processorFeesMinor: 87 - 58, platformFeesMinor: 90 - 60, netMinor: 3 * 941 - 941 - 1500 });
  });

  it('over several batches, gives a reversal that comes before any sale the first batch, with the oldest sales to cover it', () => {
    // Arrange: payment 0 was settled; its refund comes first in ledger order, before any sale to cover it.
    const items = [reversal(0, -941), ...Array.from({ length: 100 }, (_, n) => sale(n + 1))];

    // Act
    const { batches, unplaceable } = planBatches(items, linesOnly(99));

    // Assert: the refund and sales 1 to 98, then sales 99 and 100.
    expect(unplaceable).toEqual([]);
    expect(batches.map((batch) => batch.items.map((it) => it.svcTxId))).toEqual([
      [reversal(0, -941).svcTxId, ...Array.from({ length: 98 }, (_, n) => sale(n + 1).svcTxId)],
      [sale(99).svcTxId, sale(100).svcTxId],
    ]);
    expect(batches.map((batch) => batch.totals.netMinor)).toEqual([98 * 941 - 941, 2 * 941]);
  });

  it('lets a group wait whole when its reversals are larger than the largest sales a batch has room for: it is not paid part of its net', () => {
    // Arrange: 150 sales of 941 (141,150) against one chargeback of 100,000: the group nets 41,150, but a batch of
    // 99 lines has room for the chargeback and 98 sales (92,218), which do not cover it.
    const items = [reversal(0, -100_000, { type: 'chargeback', key: 'chargeback#dp_1' }), ...Array.from({ length: 150 }, (_, n) => sale(n + 1))];

    // Act
    const plan = planBatches(items, linesOnly(99));

    // Assert
    expect(plan.batches).toEqual([]);
    expect(plan.owing).toEqual([]);
    expect(plan.unplaceable).toEqual([{ partnerId: 'ptr_a', clientId: 'shop-1', currency: 'EUR', entries: 151 }]);
    // The same group at the default bound fits in one batch, which pays its net.
    expect(planBatches(items, BATCH_LIMITS).batches.map((batch) => [batch.items.length, batch.totals.netMinor])).toEqual([[151, 150 * 941 - 100_000]]);
  });

  it('lets a group wait whole when its reversals alone fill a batch, however many sales would cover them', () => {
    // Arrange: three small refunds of settled payments and 20 sales, 3 lines a batch: no room for a sale beside them.
    const items = [reversal(0, -10), reversal(1, -10, { createdAt: at(1) }), reversal(2, -10, { createdAt: at(2) }), ...Array.from({ length: 20 }, (_, n) => sale(n + 3))];

    const plan = planBatches(items, linesOnly(3));

    expect(plan.batches).toEqual([]);
    expect(plan.unplaceable).toEqual([{ partnerId: 'ptr_a', clientId: 'shop-1', currency: 'EUR', entries: 23 }]);
  });

  it('makes no batch while the merchant owes: a group netting below zero waits whole and is listed as owing since its oldest reversal', () => {
    // Arrange: two sales (1,882) against reversals of earlier payments worth 3,041: shop-1 owes 1,159.
    const items = [sale(1), sale(2), reversal(3, -941, { createdAt: at(9000) }), reversal(4, -2000, { createdAt: at(7000) }), reversal(5, -100, { createdAt: at(8000) })];

    // Act
    const plan = planBatches(items, BATCH_LIMITS);

    // Assert
    expect(plan).toEqual({ batches: [], owing: [{ partnerId: 'ptr_a', clientId: 'shop-1', currency: 'EUR', owedMinor: 1159, since: at(7000) }], unplaceable: [] });
  });

  it('makes no batch of reversals alone, and no batch and no debt of a group netting exactly zero', () => {
    const jpy = currencyCode('JPY');
    const fullyRefunded = [sale(7, { settlesTransaction: false }), reversal(7, -941)];

    const plan = planBatches([reversal(1, -500), reversal(2, -10, { currency: jpy, createdAt: at(50) }), reversal(3, -20, { currency: jpy, createdAt: at(40) }), ...fullyRefunded.map((it) => ({ ...it, clientId: 'shop-2' }))], BATCH_LIMITS);

    expect(plan.batches).toEqual([]);
    expect(plan.owing).toEqual([
      { partnerId: 'ptr_a', clientId: 'shop-1', currency: 'EUR', owedMinor: 500, since: reversal(1, -500).createdAt },
      { partnerId: 'ptr_a', clientId: 'shop-1', currency: 'JPY', owedMinor: 30, since: at(40) },
    ]);
  });

  it('settles the sale of a payment refunded in full before settlement as an entry beside its refund, paying the rest of the group', () => {
    const items = [sale(1, { settlesTransaction: false }), reversal(1, -941, { key: 'refund#000000001000' }), sale(2)];

    const { batches } = planBatches(items, BATCH_LIMITS);

    expect(batches).toHaveLength(1);
    expect(batches[0]?.items.map((it) => [it.svcTxId, it.type, it.settlesTransaction])).toEqual([
      [sale(1).svcTxId, 'transaction', false],
      [sale(1).svcTxId, 'refund', false],
      [sale(2).svcTxId, 'transaction', true],
    ]);
    expect(batches[0]?.totals.netMinor).toBe(941);
  });
});
