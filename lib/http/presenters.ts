/** Domain types -> the API's resource shapes (snake_case, as the spec and decisions.md show them). */
import type { Client, Partner } from '../domain/partner';
import type { Page } from '../store/paging';
import type { IssuedApiKey } from '../use-cases/partners';

export const presentPartner = (partner: Partner) => ({
  partner_id: partner.partnerId,
  name: partner.name,
  status: partner.status,
  kyc_status: partner.kycStatus,
  service_fee_percentage: partner.serviceFeePercentage,
  rate_limit_per_minute: partner.rateLimitPerMinute,
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
  partner_fee_flat_usd: client.partnerFeeFlatUsd,
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

/** `{ items, next_cursor }` (decisions.md §9). */
export const presentPage = <T, R>(page: Page<T>, present: (item: T) => R) => ({
  items: page.items.map(present),
  next_cursor: page.nextCursor,
});
