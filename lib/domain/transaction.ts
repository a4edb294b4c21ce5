/** Transactions: one payment, linked to one processor payment intent (interface-spec.md). */
import { errors, type ServiceError } from './errors';
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
  fees: FeeBreakdown | null;
  receiptEmail: string | null;
  statementDescriptorSuffix: string | null;
  meta: Record<string, unknown> | null;
  createdAt: string;
  updatedAt: string;
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
 * A refund or chargeback of a transaction already in a settlement batch (`queued` or `paid`): its amounts,
 * negated, deducted from that client's next batch in the same currency (decisions.md §5, §7). Minor units;
 * the four amounts keep the split's invariant: processorFee + platformFee + net = gross.
 */
export interface SettlementAdjustment {
  svcTxId: string;
  partnerId: string;
  clientId: string;
  partnerReference: string;
  currency: CurrencyCode;
  kind: 'refund' | 'chargeback';
  grossMinor: number;
  processorFeeMinor: number;
  platformFeeMinor: number;
  netAmountMinor: number;
  createdAt: string;
}

/**
 * What a move does to settlement bookkeeping (docs/data-model.md: the sparse settlement index):
 * - `index`: a payment that succeeded now waits for settlement;
 * - `unindex`: refunded or charged back before any batch took it, it waits no more (nothing was paid);
 * - `adjust`: refunded or charged back after a batch took it, it keeps its `settlementStatus` and the
 *   adjustment waits instead, for the next batch to deduct;
 * - `none`: a payment that failed or was abandoned never waited.
 */
export type SettlementEffect =
  | { kind: 'index' }
  | { kind: 'unindex' }
  | { kind: 'adjust'; adjustment: SettlementAdjustment }
  | { kind: 'none' };

export function settlementEffectOf(transaction: Transaction, to: TransactionStatus, now: string): SettlementEffect {
  if (to === 'succeeded') return { kind: 'index' };
  if (to !== 'refunded' && to !== 'chargeback') return { kind: 'none' };
  if (transaction.settlementStatus === 'unsettled') return { kind: 'unindex' };
  return { kind: 'adjust', adjustment: reversalOf(transaction, to === 'refunded' ? 'refund' : 'chargeback', now) };
}

/** `-amount`, but never `-0` (a zero fee stays a plain 0). */
const negate = (amount: number) => (amount === 0 ? 0 : -amount);

/** The whole transaction reversed: every amount the batch counted, negated (a settled transaction has fees). */
function reversalOf(transaction: Transaction, kind: SettlementAdjustment['kind'], now: string): SettlementAdjustment {
  const processorFee = transaction.fees?.processorFeeMinor ?? 0;
  const platformFee = transaction.fees?.platformFeeMinor ?? 0;
  const net = transaction.fees?.netAmountMinor ?? transaction.amountMinor - processorFee - platformFee;
  return {
    svcTxId: transaction.svcTxId,
    partnerId: transaction.partnerId,
    clientId: transaction.clientId,
    partnerReference: transaction.partnerReference,
    currency: transaction.currency,
    kind,
    grossMinor: negate(transaction.amountMinor),
    processorFeeMinor: negate(processorFee),
    platformFeeMinor: negate(platformFee),
    netAmountMinor: negate(net),
    createdAt: now,
  };
}

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
