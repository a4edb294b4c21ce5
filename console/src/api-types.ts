/**
 * What the admin API takes and answers, as far as the console uses it. The resources are the service's own
 * response schemas (`lib/http/response-schemas.ts`, what the OpenAPI document shows and the tests hold every
 * answer to), imported as types only: nothing of the service is bundled, and a changed resource fails the
 * console's typecheck. The lists of values the forms offer are checked against the service's the same way.
 */
import type * as z from 'zod';
import type { BATCH_STATUSES as SERVICE_BATCH_STATUSES } from '../../lib/domain/settlement';
import type { TRANSACTION_STATUSES as SERVICE_TRANSACTION_STATUSES } from '../../lib/domain/transaction';
import type { DELIVERY_STATUSES as SERVICE_DELIVERY_STATUSES, PARTNER_EVENTS } from '../../lib/domain/webhooks';
import type * as resources from '../../lib/http/response-schemas';

export type Branding = z.infer<typeof resources.Branding>;
export type Partner = z.infer<typeof resources.Partner>;
export type ApiKey = z.infer<typeof resources.ApiKey>;
/** A page of a partner's keys or of the platform-wide keys: the same resource either way. */
export type ApiKeyPage = z.infer<typeof resources.ApiKeyPage>;
export type IssuedApiKey = z.infer<typeof resources.IssuedApiKey>;
export type WebhookEndpoint = z.infer<typeof resources.WebhookEndpoint>;
export type CreatedWebhookEndpoint = z.infer<typeof resources.CreatedWebhookEndpoint>;
export type WebhookDelivery = z.infer<typeof resources.WebhookDelivery>;
/** Amounts in major units of `currency`; fee fields null until the payment succeeds. */
export type Transaction = z.infer<typeof resources.Transaction>;
export type SettlementBatch = z.infer<typeof resources.SettlementBatch>;
/** A ledger entry settled in a batch besides its payments' sales (refunds, disputes, dispute fees, reinstatements). */
export type SettlementAdjustment = SettlementBatch['adjustments'][number];
/** `transaction` (a sale settled beside its reversals), `refund`, `chargeback`, `dispute_fee`, `dispute_reinstated`. */
export type EntryType = SettlementAdjustment['type'];
/** A transaction's latest dispute: `needs_response`, `won` or `lost`. */
export type DisputeStatus = NonNullable<Transaction['disputeStatus']>;
/** One merchant's money waiting for settlement in one currency, major units (decisions.md §5a). */
export type Balance = z.infer<typeof resources.Balance>;
export type BalancePage = z.infer<typeof resources.BalancePage>;
export type PartnerStatus = 'active' | 'suspended';
export type KycStatus = 'pending' | 'approved' | 'rejected';



export interface NewPartner {
  name: string;
  service_fee_percentage: number;
  status: PartnerStatus;
  kyc_status: KycStatus;
  rate_limit_per_minute: number | null;
}

export interface BrandingInput {
  display_name: string | null;
  logo_url: string | null;
  brand_color: string | null;
}

export type PartnerChanges = Partial<Omit<NewPartner, 'name'>> & { name?: string; branding?: BrandingInput | null };



export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

export const WEBHOOK_EVENTS = [
  'transaction_succeeded',
  'transaction_failed',
  'transaction_abandoned',
  'transaction_refunded',
  'transaction_chargeback',
  'transaction_partially_refunded',
  'transaction_dispute_closed',
] as const satisfies typeof PARTNER_EVENTS;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];


export interface NewWebhookEndpoint {
  name: string;
  url: string;
  events: WebhookEvent[];
}


export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const satisfies typeof SERVICE_DELIVERY_STATUSES;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];


export const TRANSACTION_STATUSES = ['initialized', 'pending', 'succeeded', 'failed', 'abandoned', 'refunded', 'chargeback'] as const satisfies typeof SERVICE_TRANSACTION_STATUSES;
export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number];


export interface TransactionFilters {
  svc_tx_id?: string;
  partner_reference?: string;
  status?: TransactionStatus | '';
}

export const BATCH_STATUSES = ['pending', 'sent', 'failed'] as const satisfies typeof SERVICE_BATCH_STATUSES;
export type BatchStatus = (typeof BATCH_STATUSES)[number];


/** `GET /admin/partners/{partner_id}/balances`: `owing` for only the merchants that owe money. */
export interface BalanceFilters {
  owing: boolean;
  client_id?: string;
  currency?: string;
}

export interface SettlementRun {
  created_batches: number;
  batches: SettlementBatch[];
  /** The run goes on in the background (its time or its answer's size ran out): more batches will appear. */
  continuing: boolean;
}
