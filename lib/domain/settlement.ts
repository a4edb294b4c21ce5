/**
 * Settlement planning (interface-spec.md Settlement batch; decisions.md §5, §7): which waiting items go into
 * which batch. Pure: the store reads what waits and writes each batch atomically; this decides the grouping.
 *
 * Rules:
 * - a batch belongs to one partner, one client and one currency;
 * - it holds at most {@link MAX_ITEMS_PER_BATCH} items, so that the batch and one conditional flip per item fit
 *   in one 100-item TransactWriteItems; a larger group becomes several batches, oldest items first;
 * - refunds and chargebacks of already settled transactions (negative adjustments) are deducted from the
 *   client's next batch in that currency, oldest first, as long as the batch's net stays ≥ 0 (a payout cannot be
 *   negative); an adjustment that does not fit waits for a later batch, so nothing is ever dropped;
 * - totals are exact sums in minor units.
 */
import type { CurrencyCode } from './money';

/** One TransactWriteItems holds 100 items: the batch itself and one flip per item it takes. */
export const MAX_ITEMS_PER_BATCH = 99;

/** Something waiting for settlement: a succeeded transaction, or a negative adjustment (all amounts ≤ 0). */
export interface SettlementItem {
  kind: 'transaction' | 'adjustment';
  /** An adjustment's cause; `null` on a transaction. */
  reversal: 'refund' | 'chargeback' | null;
  svcTxId: string;
  partnerId: string;
  clientId: string;
  partnerReference: string;
  currency: CurrencyCode;
  /** The transaction's creation, or the adjustment's (when the refund or chargeback was applied). */
  createdAt: string;
  grossMinor: number;
  processorFeeMinor: number;
  platformFeeMinor: number;
  netMinor: number;
}

export interface SettlementTotals {
  grossMinor: number;
  processorFeesMinor: number;
  platformFeesMinor: number;
  netMinor: number;
}

export interface PlannedBatch {
  partnerId: string;
  clientId: string;
  currency: CurrencyCode;
  items: SettlementItem[];
  totals: SettlementTotals;
}

/** Exact sums of the items' amounts (minor units are safe integers far below 2^53 here). */
export function totalsOf(items: readonly SettlementItem[]): SettlementTotals {
  return items.reduce<SettlementTotals>(
    (sum, item) => ({
      grossMinor: sum.grossMinor + item.grossMinor,
      processorFeesMinor: sum.processorFeesMinor + item.processorFeeMinor,
      platformFeesMinor: sum.platformFeesMinor + item.platformFeeMinor,
      netMinor: sum.netMinor + item.netMinor,
    }),
    { grossMinor: 0, processorFeesMinor: 0, platformFeesMinor: 0, netMinor: 0 },
  );
}

const oldestFirst = (a: SettlementItem, b: SettlementItem) => a.createdAt.localeCompare(b.createdAt) || a.svcTxId.localeCompare(b.svcTxId);

/**
 * Plans the batches of every waiting item, grouped by partner, client and currency. Adjustments of a group with
 * no transaction to deduct them from wait (they are not in any batch).
 */
export function planBatches(waiting: readonly SettlementItem[]): PlannedBatch[] {
  const groups = new Map<string, SettlementItem[]>();
  for (const item of waiting) {
    const key = JSON.stringify([item.partnerId, item.clientId, item.currency]);
    groups.set(key, [...(groups.get(key) ?? []), item]);
  }
  return [...groups.values()].flatMap(planGroup);
}

function planGroup(items: SettlementItem[]): PlannedBatch[] {
  const transactions = items.filter((item) => item.kind === 'transaction').sort(oldestFirst);
  const adjustments = items.filter((item) => item.kind === 'adjustment').sort(oldestFirst);
  const batches: PlannedBatch[] = [];
  for (let start = 0; start < transactions.length; start += MAX_ITEMS_PER_BATCH) {
    const taken = transactions.slice(start, start + MAX_ITEMS_PER_BATCH);
    let net = totalsOf(taken).netMinor;
    // Deduct waiting adjustments, oldest first, while the batch has room and its net stays ≥ 0.
    while (adjustments.length > 0 && taken.length < MAX_ITEMS_PER_BATCH) {
      const next = adjustments[0] as SettlementItem;
      if (net + next.netMinor < 0) break;
      net += next.netMinor;
      taken.push(next);
      adjustments.shift();
    }
    const first = taken[0] as SettlementItem;
    batches.push({ partnerId: first.partnerId, clientId: first.clientId, currency: first.currency, items: taken, totals: totalsOf(taken) });
  }
  return batches;
}

export type RailName = 'railA' | 'railB';

const RAIL_A_CURRENCIES: ReadonlySet<string> = new Set(['GBP', 'EUR', 'USD']);

/** The rail a batch in `currency` pays over (interface-spec.md POST /settlements/pay): A for GBP, EUR, USD; else B. */
export const railFor = (currency: CurrencyCode): RailName => (RAIL_A_CURRENCIES.has(currency) ? 'railA' : 'railB');

/** The spec's batch statuses (interface-spec.md Settlement batch status). */
export const BATCH_STATUSES = ['pending', 'sent', 'failed'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

/**
 * A settlement batch as stored: its lines (the transactions it pays, then the adjustments it deducts) are kept
 * on the batch as they were when it was made, so its report never changes afterwards.
 *
 * A payout holds the batch with a claim (`payoutClaim`) while it runs: taken by a conditional update (status
 * pending or failed, and no live claim), so two pays never reach the rail at once; it lapses at `expiresAt`,
 * so a payout cut off by a crash does not hold the batch for ever.
 */
export interface SettlementBatch {
  id: string;
  partnerId: string;
  clientId: string;
  currency: CurrencyCode;
  lines: SettlementItem[];
  totals: SettlementTotals;
  status: BatchStatus;
  rail: RailName;
  /** The rail's transfer, once paid. */
  transferId: string | null;
  payoutClaim: { id: string; expiresAt: string } | null;
  payoutAttempts: number;
  /** Why the last payout failed; `null` unless `failed`. */
  failureReason: string | null;
  createdAt: string;
  updatedAt: string;
}
