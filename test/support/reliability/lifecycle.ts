/**
 * The transaction lifecycle of decisions.md §5, written out here on its own (not imported from lib/domain, so a
 * broken state machine there cannot also break the oracle that judges it), and what a storm of processor events
 * may end in.
 *
 * Moves: pending → succeeded | failed | abandoned; failed → succeeded; succeeded → refunded | chargeback; refunded →
 * chargeback (a cardholder disputes a charge refunded in full: a dispute wins over a refund, in any order). No status
 * is ever entered twice, so the set of statuses a transaction moved through names its path uniquely: the path is
 * that set ordered by the machine. Under events delivered in any order, duplicated and concurrently, the service
 * must end in *some* serialisation of them: a valid path, one partner event per move, nothing for the rest.
 */

export type Status = 'pending' | 'succeeded' | 'failed' | 'abandoned' | 'refunded' | 'chargeback';
export type MovedTo = Exclude<Status, 'pending'>;

/**
 * decisions.md §5: the only moves a processor event may make, written out here on purpose rather than imported
 * from lib/domain, so the suites that judge the service by it (the storm, the webhook fuzzer) do not share a bug
 * with what they judge. `initialized` (the legacy flow before an intent) moves by no event.
 */
export const ALLOWED_MOVES: Readonly<Record<Status | 'initialized', readonly MovedTo[]>> = {
  initialized: [],
  pending: ['succeeded', 'failed', 'abandoned'],
  failed: ['succeeded'],
  succeeded: ['refunded', 'chargeback'],
  abandoned: [],
  refunded: ['chargeback'],
  chargeback: [],
};
const ALLOWED = ALLOWED_MOVES;

/**
 * The path through the machine that visits exactly `moved`, or `undefined` when no valid path does: e.g.
 * {succeeded, failed} is pending → failed → succeeded, and {abandoned, succeeded} is none. A status is never
 * entered twice on a valid path, so a repeated one (two partner events for one move) is no path either.
 */
export function pathOf(moved: readonly MovedTo[]): MovedTo[] | undefined {
  if (new Set(moved).size !== moved.length) return undefined;
  const walk = (at: Status, left: ReadonlySet<MovedTo>): MovedTo[] | undefined => {
    if (left.size === 0) return [];
    for (const to of ALLOWED[at]) {
      if (!left.has(to)) continue;
      const rest = walk(to, new Set([...left].filter((status) => status !== to)));
      if (rest !== undefined) return [to, ...rest];
    }
    return undefined;
  };
  return walk('pending', new Set(moved));
}

/** The status a path ends in. */
export const finalOf = (path: readonly MovedTo[]): Status => path.at(-1) ?? 'pending';

// ---------------------------------------------------------------------------------------------------------------
// The ledger (decisions.md §5a), written out here on its own as well: what a payment's processor events say, merged
// in any order, and the status, partner events and entries that calls for. The suites judge the service by it.

export type DisputeStatus = 'needs_response' | 'won' | 'lost';

export interface Dispute {
  id: string;
  amountMinor: number;
  /** The processor's dispute fee, once an event states one. */
  feeMinor: number | null;
  status: DisputeStatus;
}

/** One payment as the spec sees it: its status, whether it has a split (it succeeded once), and the facts so far. */
export interface Payment {
  amountMinor: number;
  status: Status;
  split: boolean;
  /** The largest cumulative refund seen (minor units), and each level that raised it, in the order recorded. */
  refundedMinor: number;
  refundLevels: number[];
  /** In the order first seen. */
  disputes: Dispute[];
}

export const newPayment = (amountMinor: number, status: Status = 'pending'): Payment => ({ amountMinor, status, split: false, refundedMinor: 0, refundLevels: [], disputes: [] });

/** What one processor event says about a payment, in minor units of its currency. */
export type Said =
  | { kind: 'outcome'; status: 'succeeded' | 'failed' | 'abandoned' }
  | { kind: 'refund'; refundedMinor: number }
  | { kind: 'dispute'; dispute: Dispute };

/** A partner event: its name, the status in its body, and what the ledger's two events add. */
export interface Notice {
  event: string;
  status: Status;
  refundedMinor?: number;
  disputeStatus?: DisputeStatus;
}

const isClosed = (dispute: Dispute) => dispute.status !== 'needs_response';

/** The facts with `said` merged in (the largest refund; disputes by id, a closed one staying closed), or `undefined` when it adds nothing. */
function merged(payment: Payment, said: Said): Pick<Payment, 'refundedMinor' | 'refundLevels' | 'disputes'> | undefined {
  if (said.kind === 'refund') {
    // More than the payment is not a refund of it; a level at or below the one recorded is stale or repeated.
    if (said.refundedMinor > payment.amountMinor || said.refundedMinor <= payment.refundedMinor) return undefined;
    return { refundedMinor: said.refundedMinor, refundLevels: [...payment.refundLevels, said.refundedMinor], disputes: payment.disputes };
  }
  if (said.kind === 'dispute') {
    const incoming = said.dispute;
    // The payment's disputes together dispute at most the payment.
    const others = payment.disputes.filter((dispute) => dispute.id !== incoming.id).reduce((sum, dispute) => sum + dispute.amountMinor, 0);
    if (others + incoming.amountMinor > payment.amountMinor) return undefined;
    const known = payment.disputes.find((dispute) => dispute.id === incoming.id);
    if (known === undefined) return { ...payment, disputes: [...payment.disputes, { ...incoming }] };
    const next: Dispute = { ...known, feeMinor: known.feeMinor ?? incoming.feeMinor, status: isClosed(known) ? known.status : incoming.status };
    if (next.feeMinor === known.feeMinor && next.status === known.status) return undefined;
    return { ...payment, disputes: payment.disputes.map((dispute) => (dispute === known ? next : dispute)) };
  }
  return undefined;
}

/**
 * The payment after an event that says `said`, and the partner events it emits (in order), or `undefined` when it
 * changes nothing. decisions.md §5: a status moves only along ALLOWED_MOVES; §5a: the facts only grow, a refund or
 * dispute of a payment that has not succeeded is recorded and takes effect with the success, in the same write
 * (the success's event first, then the reversal's), and only a succeeded payment is reversed.
 */
export function applyEvent(payment: Payment, said: Said): { payment: Payment; notices: Notice[] } | undefined {
  const outcome: Status = said.kind === 'outcome' && ALLOWED_MOVES[payment.status].includes(said.status) ? said.status : payment.status;
  const facts = merged(payment, said);
  const after = { ...payment, ...facts };
  const succeededNow = outcome === 'succeeded' && payment.status !== 'succeeded';
  const split = payment.split || succeededNow;
  // Once succeeded, the status is what the reversals make of a success: a dispute wins over a refund in full.
  const status: Status = !split ? outcome : after.disputes.length > 0 ? 'chargeback' : after.refundedMinor >= payment.amountMinor ? 'refunded' : 'succeeded';
  if (status === payment.status && facts === undefined) return undefined;
  const notices: Notice[] = [];
  if (outcome !== payment.status) notices.push({ event: `transaction_${outcome}`, status: outcome });
  if (split) {
    if (status !== outcome) notices.push({ event: `transaction_${status}`, status });
    // What the partner was told before: nothing of the reversals while the payment had not succeeded.
    const told = succeededNow ? newPayment(payment.amountMinor) : payment;
    if (status === 'succeeded' && after.refundedMinor > told.refundedMinor) {
      notices.push({ event: 'transaction_partially_refunded', status, refundedMinor: after.refundedMinor });
    }
    for (const dispute of after.disputes) {
      const before = told.disputes.find((known) => known.id === dispute.id);
      if (isClosed(dispute) && (before === undefined || !isClosed(before))) notices.push({ event: 'transaction_dispute_closed', status, disputeStatus: dispute.status });
    }
  }
  return { payment: { ...after, status, split }, notices };
}

/** A payment's split, minor units (the sale: gross = processor fee + platform fee + net). */
export interface Split {
  processorFeeMinor: number;
  platformFeeMinor: number;
  svcEarningMinor: number;
}

export interface Entry {
  key: string;
  type: 'refund' | 'chargeback' | 'dispute_fee' | 'dispute_reinstated';
  grossMinor: number;
  processorFeeMinor: number;
  platformFeeMinor: number;
  svcEarningMinor: number;
  netMinor: number;
}

type Amounts = Omit<Entry, 'key' | 'type'>;

/** `round_half_up(term × level / amount)` for non-negative integers, exactly. */
export const share = (term: number, level: number, amount: number) => Number((2n * BigInt(term) * BigInt(level) + BigInt(amount)) / (2n * BigInt(amount)));

/** What reversing the bottom `level` of a payment takes back, positive (decisions.md §5a). */
function reversalTo(amountMinor: number, split: Split, level: number): Amounts {
  const processorFeeMinor = share(split.processorFeeMinor, level, amountMinor);
  const platformFeeMinor = share(split.platformFeeMinor, level, amountMinor);
  return { grossMinor: level, processorFeeMinor, platformFeeMinor, svcEarningMinor: share(split.svcEarningMinor, level, amountMinor), netMinor: level - processorFeeMinor - platformFeeMinor };
}

const FIELDS = ['grossMinor', 'processorFeeMinor', 'platformFeeMinor', 'svcEarningMinor', 'netMinor'] as const;
/** `-x`, never `-0`. */
const minus = (x: number) => (x === 0 ? 0 : -x);

/** The entry reversing the layer (from, to] of the payment: `reversal(to) - reversal(from)`, negative. */
function layer(amountMinor: number, split: Split, from: number, to: number): Amounts {
  const upper = reversalTo(amountMinor, split, to);
  const lower = reversalTo(amountMinor, split, from);
  return Object.fromEntries(FIELDS.map((field) => [field, minus(upper[field] - lower[field])])) as unknown as Amounts;
}

/**
 * Every entry after the sale the payment's facts call for, once it has a split (none before): each refund step the
 * layer it adds (refunds take the payment from the bottom), each dispute the top layer of its amount, its fee when
 * stated, and its reinstatement when won. Keys as the service stores them (`refund#<12-digit level>` ...).
 */
export function entriesFor(payment: Payment, split: Split): Entry[] {
  if (!payment.split) return [];
  const { amountMinor } = payment;
  const entries: Entry[] = [];
  let from = 0;
  for (const level of payment.refundLevels) {
    entries.push({ key: `refund#${String(level).padStart(12, '0')}`, type: 'refund', ...layer(amountMinor, split, from, level) });
    from = level;
  }
  for (const dispute of payment.disputes) {
    const reversal = layer(amountMinor, split, amountMinor - dispute.amountMinor, amountMinor);
    entries.push({ key: `chargeback#${dispute.id}`, type: 'chargeback', ...reversal });
    if (dispute.feeMinor !== null && dispute.feeMinor > 0) {
      entries.push({ key: `dispute_fee#${dispute.id}`, type: 'dispute_fee', grossMinor: 0, processorFeeMinor: dispute.feeMinor, platformFeeMinor: 0, svcEarningMinor: 0, netMinor: -dispute.feeMinor });
    }
    if (dispute.status === 'won') {
      entries.push({ key: `dispute_reinstated#${dispute.id}`, type: 'dispute_reinstated', ...(Object.fromEntries(FIELDS.map((field) => [field, minus(reversal[field])])) as unknown as Amounts) });
    }
  }
  return entries;
}
