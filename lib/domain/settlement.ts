/**
 * Settlement planning (interface-spec.md Settlement batch; decisions.md §5a, §7): which waiting ledger entries go
 * into which batch. Pure: the store reads what waits and writes each batch atomically; this decides the grouping.
 *
 * Rules:
 * - a batch belongs to one partner, one client and one currency, and its totals are the exact sums of its
 *   entries (minor units): no amount is computed twice;
 * - a group (partner, client, currency) whose waiting entries sum to a net ≤ 0 makes no batch: everything waits,
 *   and the merchant owes the shortfall until later sales cover it (no payout while it owes);
 * - a batch holds at most {@link MAX_LINES_PER_BATCH} entries (decisions.md §7: one payout per merchant and
 *   currency, each payout costing the merchant a rail fee), and a report of at most `MAX_REPORT_BYTES` (so
 *   that every report fits in one Lambda response, whatever partners put in their references: 10,000 lines take
 *   about 1.5 MB with references of a few dozen characters, and up to 11 MB with 255-character ones); a larger group
 *   becomes batches as full as that allows and a remainder, together holding every entry of the group, none of net below 0: the first holds every reversal
 *   (with the oldest sales, or the largest if the oldest do not cover them), the rest only sales. So whichever of
 *   them are made, a merchant is never paid sales whose reversals were left behind; a group whose reversals no
 *   one batch covers waits whole.
 */
import type { LedgerEntry } from './ledger';
import type { CurrencyCode } from './money';

/** Entries of one batch at most (decisions.md §7); the store builds a batch of any size up to it invisibly, then commits it in one write. */
export const MAX_LINES_PER_BATCH = 10_000;

/**
 * What one batch may hold: `lines` lines and `reportBytes` of report rows, each line's row weighing `rowBytes`
 * (`BATCH_LIMITS` in `settlement-report.ts`; smaller in tests of the splitting).
 */
export interface BatchLimits {
  lines: number;
  reportBytes: number;
  rowBytes: (line: SettlementItem) => number;
}

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
  /** It holds as much as one batch may ({@link BatchLimits}): the next line of its group did not fit. */
  full: boolean;
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
  /** Groups of net > 0 whose reversals no one batch can cover ({@link BatchLimits}): they wait whole. */
  unplaceable: { partnerId: string; clientId: string; currency: CurrencyCode; entries: number }[];
}

/** The batches of the waiting entries, each within `limits` (`BATCH_LIMITS` but in tests of the splitting). */
export function planBatches(waiting: readonly SettlementItem[], limits: BatchLimits): SettlementPlan {
  const plan: SettlementPlan = { batches: [], owing: [], unplaceable: [] };
  for (const group of groupsOf(waiting)) {
    const net = totalsOf(group).netMinor;
    const first = group[0] as SettlementItem;
    if (net > 0) {
      const batches = planGroup(group, limits);
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
 * The longest run of `candidates`, from the first, that fits in `room` lines and `roomBytes` of report; `full` when
 * one more was left out for want of room.
 */
function fill(candidates: readonly SettlementItem[], room: number, roomBytes: number, limits: BatchLimits): { taken: SettlementItem[]; full: boolean } {
  const taken: SettlementItem[] = [];
  let bytes = 0;
  for (const item of candidates) {
    const size = limits.rowBytes(item);
    if (taken.length === room || bytes + size > roomBytes) return { taken, full: true };
    taken.push(item);
    bytes += size;
  }
  return { taken, full: false };
}

/**
 * A group of net > 0 in batches within `limits`, none of net < 0, that together hold every entry of the group, so
 * they pay exactly its net. One batch when the group fits in one (the usual case). Else the first batch holds every
 * reversal, filled with the oldest sales (or, if those do not cover the reversals, the largest), and the other sales
 * follow in ledger order, each batch as full as the limits allow: 25,000 sales make 10,000 + 10,000 + 5,000. The
 * first is written first; the others hold only sales, so any of them may be made or not without paying a merchant
 * what a reversal takes back. `undefined` when the reversals are more, or larger, than one batch covers: the whole
 * group waits. Each batch lists its entries in ledger order.
 */
function planGroup(group: readonly SettlementItem[], limits: BatchLimits): PlannedBatch[] | undefined {
  const whole = fill(group, limits.lines, limits.reportBytes, limits);
  if (!whole.full) return [batchOf(group, false)];
  const debits = group.filter((item) => item.netMinor < 0);
  const credits = group.filter((item) => item.netMinor >= 0);
  const room = limits.lines - debits.length;
  const roomBytes = limits.reportBytes - debits.reduce((sum, item) => sum + limits.rowBytes(item), 0);
  if (room <= 0 || roomBytes <= 0) return undefined;
  // The first batch pays something (a build of net 0 where the plan paid something is not made, decisions.md §7).
  const covers = (sales: readonly SettlementItem[]) => totalsOf([...debits, ...sales]).netMinor > 0;
  let first = fill(credits, room, roomBytes, limits).taken;
  if (!covers(first)) first = fill([...credits].sort((a, b) => b.netMinor - a.netMinor), room, roomBytes, limits).taken;
  if (!covers(first)) return undefined;
  const inFirst = new Set(first);
  let rest = credits.filter((item) => !inFirst.has(item));
  const batches = [batchOf([...debits, ...first], rest.length > 0)];
  while (rest.length > 0) {
    const next = fill(rest, limits.lines, limits.reportBytes, limits);
    batches.push(batchOf(next.taken, next.full));
    rest = rest.slice(next.taken.length);
  }
  return batches;
}

function batchOf(items: readonly SettlementItem[], full: boolean): PlannedBatch {
  const ordered = [...items].sort(ledgerOrder);
  const first = ordered[0] as SettlementItem;
  return { partnerId: first.partnerId, clientId: first.clientId, currency: first.currency, items: ordered, totals: totalsOf(ordered), full };
}

export type RailName = 'railA' | 'railB';

const RAIL_A_CURRENCIES: ReadonlySet<string> = new Set(['GBP', 'EUR', 'USD']);

/** The rail a batch in `currency` pays over (interface-spec.md POST /settlements/pay): A for GBP, EUR, USD; else B. */
export const railFor = (currency: CurrencyCode): RailName => (RAIL_A_CURRENCIES.has(currency) ? 'railA' : 'railB');

/** The spec's batch statuses (interface-spec.md Settlement batch status). */
export const BATCH_STATUSES = ['pending', 'sent', 'failed'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

/**
 * A settlement batch as readers see it: its transactions (`transactionIds`, the sales it pays) and its other
 * entries (`adjustments`: reversals and reinstatements) as they were when it was made, so its view and report never
 * change afterwards; every line (for the report) is read apart, as `lineCount` lines.
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
  /** The payments whose sale it settles (the spec's `transactionIds`): complete, in ledger order. */
  transactionIds: string[];
  /** Its entries that are not a settled payment's sale (reversals, reinstatements, a reversed payment's sale). */
  adjustments: SettlementItem[];
  lineCount: number;
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

/** What a batch of these lines shows: the payments it settles, and its other entries. */
export function contentsOf(lines: readonly SettlementItem[]): Pick<SettlementBatch, 'transactionIds' | 'adjustments' | 'lineCount'> {
  return {
    transactionIds: lines.filter((line) => line.settlesTransaction).map((line) => line.svcTxId),
    adjustments: lines.filter((line) => !line.settlesTransaction),
    lineCount: lines.length,
  };
}

/**
 * A batch's life as stored: `building` (invisible: its lines are being reserved), then committed `pending` in one
 * write, or `discarded` (a build that was cut off or lost its lines: they wait again).
 */
export type StoredBatchStatus = BatchStatus | 'building' | 'discarded';

/**
 * The settlement status of a transaction (or ledger entry) that a batch took: it follows the batch, so every line of
 * a batch turns `queued` at the batch's commit and `paid` at its payout, all at once (docs/settlement.md). A line
 * reserved by a batch still building, or discarded, is `unsettled`.
 */
export function lineSettlementStatus(batch: StoredBatchStatus | undefined): 'unsettled' | 'queued' | 'paid' {
  if (batch === 'sent') return 'paid';
  if (batch === 'pending' || batch === 'failed') return 'queued';
  return 'unsettled';
}
