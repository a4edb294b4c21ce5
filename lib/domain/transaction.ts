/** Transactions: one payment, linked to one processor payment intent (interface-spec.md). */
import { errors, type ServiceError } from './errors';
import type { ReversalFacts } from './reversal-facts';
import type { CurrencyCode } from './money';
import type { Client, Partner } from './partner';

export const TRANSACTION_STATUSES = ['initialized', 'pending', 'succeeded', 'failed', 'abandoned', 'refunded', 'chargeback'] as const;
export const SETTLEMENT_STATUSES = ['unsettled', 'queued', 'paid'] as const;

export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number];
export type SettlementStatus = (typeof SETTLEMENT_STATUSES)[number];

/** The fee split, computed when the processor reports the payment (fees issue); integer minor units. */
export interface FeeBreakdown {
  processorFeePercent: number;
  partnerFeePercent: number;
  partnerPayoutPercent: number;
  svcEarningPercent: number;
  processorFeeMinor: number;
  platformFeeMinor: number;
  svcEarningAmountMinor: number;
  netAmountMinor: number;
}

export interface Transaction {
  /** Internal record id. */
  id: string;
  svcTxId: string;
  partnerId: string;
  partnerName: string;
  /** The partner's own merchant identifier (decisions.md §5), not the client's internal id. */
  clientId: string;
  clientName: string;
  partnerReference: string;
  processorPaymentIntentId: string | null;
  amountMinor: number;
  currency: CurrencyCode;
  status: TransactionStatus;
  settlementStatus: SettlementStatus;
  /** The settlement batch that took it (building, committed or discarded): its settlement status follows that batch. */
  batchId?: string;
  fees: FeeBreakdown | null;
  /** What the processor said of refunds and disputes (decisions.md §5a), merged from its events in any order. */
  reversals: ReversalFacts;
  /** Raised by every processor-driven change: each such write is conditional on the revision it read. */
  revision: number;
  receiptEmail: string | null;
  statementDescriptorSuffix: string | null;
  meta: Record<string, unknown> | null;
  createdAt: string;
  updatedAt: string;
  /** While the reconciliation watches it (`lib/domain/reconciliation.ts`); absent otherwise, and on older items. */
  reconciliation?: ReconciliationState | undefined;
}

/**
 * The moves a processor event may make (decisions.md §5), and nothing else: a payment settles from `pending`
 * (or is retried after `failed`), and only a succeeded payment can be refunded or charged back. Every other
 * pair (a duplicate, a late or out-of-order event, a move out of a final status) changes nothing.
 */
const ALLOWED_MOVES: Readonly<Record<TransactionStatus, readonly TransactionStatus[]>> = {
  initialized: [],
  pending: ['succeeded', 'failed', 'abandoned'],
  failed: ['succeeded'],
  succeeded: ['refunded', 'chargeback'],
  abandoned: [],
  refunded: [],
  chargeback: [],
};

/** Whether a processor event may move a transaction from `from` to `to`. Pure. */
export const canMove = (from: TransactionStatus, to: TransactionStatus): boolean => ALLOWED_MOVES[from].includes(to);

/**
 * A transaction whose outcome only the processor can tell: `pending` (or `initialized`) with an intent linked. The
 * reconciliation asks the processor about these when their events are late (decisions.md §12).
 */
export const awaitsProcessor = (transaction: Pick<Transaction, 'status' | 'processorPaymentIntentId'>): boolean =>
  (transaction.status === 'pending' || transaction.status === 'initialized') && transaction.processorPaymentIntentId !== null;

/**
 * The gate before any payment is taken (decisions.md §5), in this order: partner found, active, KYC approved;
 * then client found, active. No payment for a partner without approved KYC or a client that is not active.
 */
export function partnerPaymentRefusal(partner: Partner | undefined): ServiceError | undefined {
  if (partner === undefined) return errors.partnerNotFound();
  if (partner.status !== 'active') return errors.partnerNotActive();
  return partner.kycStatus === 'approved' ? undefined : errors.kycNotApproved();
}

export function clientPaymentRefusal(client: Client | undefined): ServiceError | undefined {
  if (client === undefined) return errors.clientNotFound();
  return client.status === 'active' ? undefined : errors.clientNotActive();
}

export function assertPartnerCanTakePayment(partner: Partner | undefined): asserts partner is Partner {
  const refusal = partnerPaymentRefusal(partner);
  if (refusal !== undefined) throw refusal;
}

export function assertClientCanTakePayment(client: Client | undefined): asserts client is Client {
  const refusal = clientPaymentRefusal(client);
  if (refusal !== undefined) throw refusal;
}

/** Where the reconciliation stands with a watched transaction. */
export interface ReconciliationState {
  /** When the watch began: the intent linked (the transaction waits), or the failure. */
  since: string;
  /** Looks at the processor since then. */
  checks: number;
}

export interface TransactionFilters {
  status?: TransactionStatus | undefined;
  clientId?: string | undefined;
  partnerReference?: string | undefined;
  createdFrom?: string | undefined;
  createdTo?: string | undefined;
  /** One transaction by its id (the admin search): its own item, the other filters applied to it. */
  svcTxId?: string | undefined;
}
