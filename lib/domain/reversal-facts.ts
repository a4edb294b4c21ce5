/**
 * What the processor has said about a payment's money after its sale (decisions.md §5a), kept on the transaction
 * and merged from its events in any order. The ledger (`ledger.ts`) turns these facts into entries; the
 * transaction only carries them, so this module depends on neither.
 */
export const DISPUTE_STATUSES = ['needs_response', 'won', 'lost'] as const;
export type DisputeStatus = (typeof DISPUTE_STATUSES)[number];

/** A recorded refund step: the cumulative refunded amount it reached, and the processor's refunds in it. */
export interface RefundStep {
  toMinor: number;
  refundIds: string[];
  /** Written before the ledger (a whole-payment adjustment or nothing): it has no entry of its own. */
  legacy?: boolean;
}

export interface DisputeFacts {
  id: string;
  amountMinor: number;
  /** The processor's dispute fee, once a dispute event states it. */
  feeMinor: number | null;
  status: DisputeStatus;
  /** Recorded before the ledger (its whole-payment reversal exists as an adjustment): no chargeback entry of its own. */
  legacy?: boolean;
}

/** What the processor has said about a payment's money after the sale, merged from its events in any order. */
export interface ReversalFacts {
  /** The largest cumulative `amount_refunded` seen, minor units. */
  refundedMinor: number;
  /** The refund steps recorded, in ascending `toMinor`. */
  refundSteps: RefundStep[];
  disputes: DisputeFacts[];
}

export const NO_REVERSALS: ReversalFacts = Object.freeze({ refundedMinor: 0, refundSteps: [], disputes: [] }) as ReversalFacts;
