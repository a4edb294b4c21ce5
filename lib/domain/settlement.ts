/**
 * Settlement planning (interface-spec.md Settlement batch; decisions.md §5a, §7): which waiting ledger entries go
 * into which batch. Pure: the store reads what waits and writes each batch atomically; this decides the grouping.
 *
 * Rules:
 * - a batch belongs to one partner, one client and one currency, and its totals are the exact sums of its
 *   entries (minor units): no amount is computed twice;
 * - a group (partner, client, currency) whose waiting entries sum to a net ≤ 0 makes no batch: everything waits,
 *   and the merchant owes the shortfall until later sales cover it (no payout while it owes);
 * - a batch holds at most {@link MAX_ITEMS_PER_BATCH} entries, so that the batch and one conditional flip per
 *   entry fit in one 100-item TransactWriteItems; a larger group becomes as few batches as its lines need, none of
 *   net below 0, together holding every entry of the group: a run pays a merchant exactly its net, never a part
 *   that leaves it owing (a group with a reversal no batch can cover waits whole).
 */
import type { LedgerEntry } from './ledger';
import type { CurrencyCode } from './money';

/** One TransactWriteItems holds 100 items: the batch itself and one flip per entry it takes. */
export const MAX_ITEMS_PER_BATCH = 99;

/**
 * An entry waiting for settlement. `settlesTransaction`: the entry is the sale of a payment that is still
 * `succeeded`, so the batch that takes it pays that transaction (its `transactionIds`, the spec's inclusion
 * rule); a payment reversed before settlement has its sale settled as an entry only, beside its reversals.
 */
export interface SettlementItem extends LedgerEntry {
  settlesTransaction: boolean;
  /** A sale's transaction revision as read: the batch takes it only if no event changed it since. */
  revision?: number;
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

/** A group whose waiting entries net below zero: the merchant owes `owedMinor`, since its oldest waiting reversal. */
export interface OwingGroup {
  partnerId: string;
  clientId: string;
  currency: CurrencyCode;
  owedMinor: number;
  since: string;
}

/** Exact sums of the items' amounts (minor units are safe integers far below 2^53 here). */
export function totalsOf(items: readonly Pick<LedgerEntry, 'grossMinor' | 'processorFeeMinor' | 'platformFeeMinor' | 'netMinor'>[]): SettlementTotals {
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

/** Oldest payment first, each payment's entries together (the sale, then its reversals in key order). */
const ledgerOrder = (a: LedgerEntry, b: LedgerEntry) =>
  a.txCreatedAt.localeCompare(b.txCreatedAt) || a.svcTxId.localeCompare(b.svcTxId) || entryRank(a) - entryRank(b) || a.key.localeCompare(b.key);
const entryRank = (entry: LedgerEntry) => (entry.type === 'transaction' ? 0 : 1);

/** The waiting entries by (partner, client, currency), each group in ledger order. */
export function groupsOf<T extends LedgerEntry>(waiting: readonly T[]): T[][] {
  const groups = new Map<string, T[]>();
  for (const item of waiting) {
    const key = JSON.stringify([item.partnerId, item.clientId, item.currency]);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [item]);
    else group.push(item);
  }
  return [...groups.values()].map((group) => group.sort(ledgerOrder));
}

/** The plan of a run: the batches to write, the groups that owe, and those that wait whole (no batch for either). */
export interface SettlementPlan {
  batches: PlannedBatch[];
  owing: OwingGroup[];
  /** Groups of net > 0 with a reversal no batch of {@link MAX_ITEMS_PER_BATCH} lines can cover: they wait whole. */
  unplaceable: { partnerId: string; clientId: string; currency: CurrencyCode; entries: number }[];
}

export function planBatches(waiting: readonly SettlementItem[]): SettlementPlan {
  const plan: SettlementPlan = { batches: [], owing: [], unplaceable: [] };
  for (const group of groupsOf(waiting)) {
    const net = totalsOf(group).netMinor;
    const first = group[0] as SettlementItem;
    if (net > 0) {
      const batches = planGroup(group);
      if (batches === undefined) plan.unplaceable.push({ partnerId: first.partnerId, clientId: first.clientId, currency: first.currency, entries: group.length });
      else plan.batches.push(...batches);
    } else if (net < 0) plan.owing.push(owingOf(group, -net));
  }
  return plan;
}

function owingOf(group: readonly SettlementItem[], owedMinor: number): OwingGroup {
  const first = group[0] as SettlementItem;
  const since = group.filter((item) => item.netMinor < 0).map((item) => item.createdAt).sort()[0] ?? first.createdAt;
  return { partnerId: first.partnerId, clientId: first.clientId, currency: first.currency, owedMinor, since };
}

/**
 * A group of net > 0 in batches of at most {@link MAX_ITEMS_PER_BATCH}, none of net < 0, that together hold every
 * entry of the group, so they pay exactly its net. One batch when the group fits in one (the usual case); else as
 * few batches as the lines need, balanced: the reversals first (largest first, each to the batch holding the
 * fewest), then the sales and reinstatements (largest first, each to the batch with the lowest net that has room).
 * Each batch lists its entries in ledger order. `undefined` when a batch would still be below 0 (a reversal larger
 * than what the lines of one batch cover): paying the rest would pay the merchant more than it earned, so the whole
 * group waits.
 */
function planGroup(group: readonly SettlementItem[]): PlannedBatch[] | undefined {
  const count = Math.ceil(group.length / MAX_ITEMS_PER_BATCH);
  const chunks = Array.from({ length: count }, () => ({ items: [] as SettlementItem[], net: 0 }));
  const byMagnitude = (a: SettlementItem, b: SettlementItem) => Math.abs(b.netMinor) - Math.abs(a.netMinor);
  const add = (chunk: (typeof chunks)[number], item: SettlementItem) => {
    chunk.items.push(item);
    chunk.net += item.netMinor;
  };
  const withRoom = () => chunks.filter((chunk) => chunk.items.length < MAX_ITEMS_PER_BATCH);
  for (const debit of group.filter((item) => item.netMinor < 0).sort(byMagnitude)) {
    add(withRoom().reduce((least, chunk) => (chunk.items.length < least.items.length ? chunk : least)), debit);
  }
  for (const credit of group.filter((item) => item.netMinor >= 0).sort(byMagnitude)) {
    add(withRoom().reduce((lowest, chunk) => (chunk.net < lowest.net ? chunk : lowest)), credit);
  }
  if (chunks.some((chunk) => chunk.net < 0)) return undefined;
  return chunks.map(({ items }) => {
    const ordered = [...items].sort(ledgerOrder);
    const first = ordered[0] as SettlementItem;
    return { partnerId: first.partnerId, clientId: first.clientId, currency: first.currency, items: ordered, totals: totalsOf(ordered) };
  });
}

export type RailName = 'railA' | 'railB';

const RAIL_A_CURRENCIES: ReadonlySet<string> = new Set(['GBP', 'EUR', 'USD']);

/** The rail a batch in `currency` pays over (interface-spec.md POST /settlements/pay): A for GBP, EUR, USD; else B. */
export const railFor = (currency: CurrencyCode): RailName => (RAIL_A_CURRENCIES.has(currency) ? 'railA' : 'railB');

/** The spec's batch statuses (interface-spec.md Settlement batch status). */
export const BATCH_STATUSES = ['pending', 'sent', 'failed'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

/**
 * A settlement batch as stored: its lines (the ledger entries it settles) are kept on the batch as they were
 * when it was made, so its report never changes afterwards.
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

export interface BatchFilters {
  status?: BatchStatus | undefined;
  clientId?: string | undefined;
}
