/** Domain types -> the API's resource shapes (snake_case, as the spec and decisions.md show them). */
import { disputedMinorOf, disputeStatusOf } from '../domain/ledger';
import { type CurrencyCode, toMajorUnits } from '../domain/money';
import { type Client, FLAT_FEE_CURRENCY, type Partner } from '../domain/partner';
import type { SettlementBatch, SettlementItem } from '../domain/settlement';
import type { Transaction } from '../domain/transaction';
import { batchReportContentDisposition, batchReportPieces, SETTLEMENT_REPORT_CONTENT_TYPE } from '../domain/settlement-report';
import type { ApiKeySummary } from '../auth/api-keys';
import type { Page } from '../domain/page';
import type { IssuedApiKey } from '../use-cases/partners';
import type { Balance } from '../use-cases/balances';
import type { CheckoutResult } from '../use-cases/transactions';
import type { HttpResult } from './types';

/** Branding as the widget shows it: the partner's name stands in for an unset display name. */
export const presentBranding = (partner: Partner) => ({
  display_name: partner.branding?.displayName ?? partner.name,
  logo_url: partner.branding?.logoUrl ?? null,
  brand_color: partner.branding?.brandColor ?? null,
});

export const presentPartner = (partner: Partner) => ({
  partner_id: partner.partnerId,
  name: partner.name,
  status: partner.status,
  kyc_status: partner.kycStatus,
  service_fee_percentage: partner.serviceFeePercentage,
  rate_limit_per_minute: partner.rateLimitPerMinute,
  branding: presentBranding(partner),
  created_at: partner.createdAt,
  updated_at: partner.updatedAt,
});

export const presentClient = (client: Client) => ({
  id: client.id,
  partner_id: client.partnerId,
  client_id: client.clientId,
  legal_name: client.legalName,
  status: client.status,
  partner_fee_percentage: client.partnerFeePercentage,
  partner_fee_flat_usd: client.partnerFeeFlatUsdCents === null ? null : toMajorUnits(client.partnerFeeFlatUsdCents, FLAT_FEE_CURRENCY),
  created_at: client.createdAt,
  updated_at: client.updatedAt,
});

export const presentIssuedApiKey = (issued: IssuedApiKey) => ({
  key_id: issued.keyId,
  api_key: issued.apiKey,
  hmac_secret: issued.hmacSecret,
  scope: issued.scope,
  ...(issued.partnerId === undefined ? {} : { partner_id: issued.partnerId }),
});

/** A key as the admin lists it: never its hash or secret. */
export const presentApiKey = (key: ApiKeySummary) => ({
  key_id: key.keyId,
  scope: key.scope,
  ...(key.partnerId === undefined ? {} : { partner_id: key.partnerId }),
  created_at: key.createdAt,
});

/** `{ items, next_cursor }` (decisions.md §9). */
export const presentPage = <T, R>(page: Page<T>, present: (item: T) => R) => ({
  items: page.items.map(present),
  next_cursor: page.nextCursor,
});

const major = (minor: number | undefined, currency: CurrencyCode) => (minor === undefined ? null : toMajorUnits(minor, currency));

/** The spec's Transaction (GET /transactions): camelCase, money in major units, fee fields null until computed. */
export const presentTransaction = (tx: Transaction) => ({
  id: tx.id,
  svcTxId: tx.svcTxId,
  partnerId: tx.partnerId,
  partnerName: tx.partnerName,
  clientId: tx.clientId,
  clientName: tx.clientName,
  partnerReference: tx.partnerReference,
  processorPaymentIntentId: tx.processorPaymentIntentId,
  amount: toMajorUnits(tx.amountMinor, tx.currency),
  currency: tx.currency,
  status: tx.status,
  processorFeePercent: tx.fees?.processorFeePercent ?? null,
  partnerFeePercent: tx.fees?.partnerFeePercent ?? null,
  partnerPayoutPercent: tx.fees?.partnerPayoutPercent ?? null,
  svcEarningPercent: tx.fees?.svcEarningPercent ?? null,
  svcEarningAmount: major(tx.fees?.svcEarningAmountMinor, tx.currency),
  processorFee: major(tx.fees?.processorFeeMinor, tx.currency),
  platformFee: major(tx.fees?.platformFeeMinor, tx.currency),
  netAmount: major(tx.fees?.netAmountMinor, tx.currency),
  settlementStatus: tx.settlementStatus,
  refundedAmount: toMajorUnits(tx.reversals.refundedMinor, tx.currency),
  disputedAmount: toMajorUnits(disputedMinorOf(tx.reversals), tx.currency),
  disputeStatus: disputeStatusOf(tx.reversals),
  meta: tx.meta,
  createdAt: tx.createdAt,
  updatedAt: tx.updatedAt,
});

/** The answer of checkout-intent (spec: POST /transactions/checkout-intent, Response 201). */
export const presentCheckout = ({ transaction, intent, publishableKey }: CheckoutResult) => ({
  svc_tx_id: transaction.svcTxId,
  status: transaction.status,
  processor_payment_intent_id: intent.id,
  client_secret: intent.clientSecret,
  processor_publishable_key: publishableKey,
});

/**
 * The spec's Settlement batch: camelCase, money in major units, the rail transfer ids null until paid. Beyond
 * the spec's fields: `adjustments` (the ledger entries it settles besides its transactions' sales, decisions.md
 * §5a), `failureReason` (why the last payout failed) and `updatedAt`.
 */
export const presentBatch = (batch: SettlementBatch) => {
  const money = (minor: number) => toMajorUnits(minor, batch.currency);
  return {
    id: batch.id,
    partnerId: batch.partnerId,
    clientId: batch.clientId,
    currency: batch.currency,
    transactionIds: batch.transactionIds,
    adjustments: batch.adjustments.map((line) => ({
        svcTxId: line.svcTxId,
        type: line.type,
        gross: money(line.grossMinor),
        processorFee: money(line.processorFeeMinor),
        platformFee: money(line.platformFeeMinor),
        net: money(line.netMinor),
        createdAt: line.createdAt,
      })),
    totalGross: money(batch.totals.grossMinor),
    totalProcessorFees: money(batch.totals.processorFeesMinor),
    totalPlatformFees: money(batch.totals.platformFeesMinor),
    totalNet: money(batch.totals.netMinor),
    status: batch.status,
    railATransferId: batch.rail === 'railA' ? batch.transferId : null,
    railBTransferId: batch.rail === 'railB' ? batch.transferId : null,
    failureReason: batch.failureReason,
    createdAt: batch.createdAt,
    updatedAt: batch.updatedAt,
  };
};

/** A merchant's waiting balance in one currency (decisions.md §5a), money in major units. */
export const presentBalance = (balance: Balance) => {
  const money = (minor: number) => toMajorUnits(minor, balance.currency);
  return {
    client_id: balance.clientId,
    currency: balance.currency,
    unsettled_net: money(balance.unsettledNetMinor),
    waiting_reversals: money(balance.waitingReversalsMinor),
    owed: money(balance.owedMinor),
    next_payout_estimate: money(balance.nextPayoutEstimateMinor),
    owing_since: balance.owingSince,
  };
};

/** The answer of a settlement run (`POST /settlements/run`, `POST /admin/settlements/run`). */
export const presentSettlementRun = (run: { batches: SettlementBatch[]; continuing: boolean }) => ({
  created_batches: run.batches.length,
  batches: run.batches.map(presentBatch),
  continuing: run.continuing,
});

/**
 * A batch's reconciliation report as the answer that downloads it (decisions.md §7): written as its lines are read,
 * a chunk at a time; what a Lambda answers is its text (bounded: docs/settlement.md "Reports").
 */
export async function presentBatchReport({ batch, lines }: { batch: SettlementBatch; lines: AsyncIterable<readonly SettlementItem[]> }): Promise<HttpResult> {
  const pieces: string[] = [];
  for await (const piece of batchReportPieces(batch, lines)) pieces.push(piece);
  return { status: 200, text: pieces.join(''), contentType: SETTLEMENT_REPORT_CONTENT_TYPE, headers: { 'content-disposition': batchReportContentDisposition(batch) } };
}
