/** Transactions: one payment, linked to one processor payment intent (interface-spec.md). */
import { errors } from './errors';
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
 * The gate before any payment is taken (decisions.md §5), in this order: partner found, active, KYC approved;
 * then client found, active. No payment for a partner without approved KYC or a client that is not active.
 */
export function assertPartnerCanTakePayment(partner: Partner | undefined): asserts partner is Partner {
  if (partner === undefined) throw errors.partnerNotFound();
  if (partner.status !== 'active') throw errors.partnerNotActive();
  if (partner.kycStatus !== 'approved') throw errors.kycNotApproved();
}

export function assertClientCanTakePayment(client: Client | undefined): asserts client is Client {
  if (client === undefined) throw errors.clientNotFound();
  if (client.status !== 'active') throw errors.clientNotActive();
}
