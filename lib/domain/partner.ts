/** Partners (payment companies) and their clients (merchants): types and the rules that gate them. */
import { errors } from './errors';
import { currencyCode } from './money';

export const PARTNER_STATUSES = ['active', 'suspended'] as const;
export const KYC_STATUSES = ['pending', 'approved', 'rejected'] as const;
export const CLIENT_STATUSES = ['active', 'suspended', 'pending_kyc'] as const;

export type PartnerStatus = (typeof PARTNER_STATUSES)[number];
export type KycStatus = (typeof KYC_STATUSES)[number];
export type ClientStatus = (typeof CLIENT_STATUSES)[number];

/** How a partner's checkout widget presents it (widget mode, decisions.md §10). */
export interface Branding {
  displayName: string | null;
  logoUrl: string | null;
  brandColor: string | null;
}

export interface Partner {
  partnerId: string;
  name: string;
  status: PartnerStatus;
  kycStatus: KycStatus;
  /** The service's own cut, percent of the amount; the floor of every client's partner fee. */
  serviceFeePercentage: number;
  /** Overrides `RATE_LIMIT_PER_MINUTE` for this partner; `null` uses the default. */
  rateLimitPerMinute: number | null;
  branding: Branding | null;
  createdAt: string;
  updatedAt: string;
}

export interface Client {
  id: string;
  partnerId: string;
  /** The partner's own, stable merchant identifier (unique per partner). */
  clientId: string;
  legalName: string;
  status: ClientStatus;
  partnerFeePercentage: number | null;
  /**
   * The flat fee on each USD payment, in whole cents (`partner_fee_flat_usd` is dollars on the API), so fees
   * are summed in integers like every other amount; `null` for none.
   */
  partnerFeeFlatUsdCents: number | null;
  createdAt: string;
  updatedAt: string;
}

/** A payee a request names: a partner and one of its clients. */
export interface PayeeIds {
  partnerId: string;
  clientId: string;
}

/** A payee as read (strongly consistent) for one request: either may be missing. */
export interface KnownPayee extends PayeeIds {
  partner: Partner | undefined;
  client: Client | undefined;
}

/** The currency of a client's flat fee: it is charged on payments in this currency only. */
export const FLAT_FEE_CURRENCY = currencyCode('USD');

/** A suspended partner may not manage its merchants (spec: POST/GET /clients -> 403 PARTNER_SUSPENDED). */
export function assertPartnerNotSuspended(partner: Partner): void {
  if (partner.status === 'suspended') throw errors.partnerSuspended();
}

/** A client's partner fee may not undercut the service's fee, which is paid out of it. */
export function assertClientFeeAllowed(partner: Partner, partnerFeePercentage: number | null): void {
  if (partnerFeePercentage !== null && partnerFeePercentage < partner.serviceFeePercentage) {
    throw errors.clientFeeBelowSvcFee(partner.serviceFeePercentage);
  }
}

/**
 * A partner as read for an update, with its revision: a counter each update raises by one (absent, 0, on a
 * partner never updated since revisions began). Timestamps cannot serve: two updates in one millisecond, or on
 * clocks out of step, carry the same `updatedAt`.
 */
export interface PartnerForUpdate {
  partner: Partner;
  revision: number;
}

export type PartnerChanges = Partial<
  Pick<Partner, 'name' | 'status' | 'kycStatus' | 'serviceFeePercentage' | 'rateLimitPerMinute' | 'branding'>
>;

/** `updated`; `changed`: the partner is no longer as it was read (nothing written); `gone`: no such partner. */
export type PartnerUpdate = 'updated' | 'changed' | 'gone';
