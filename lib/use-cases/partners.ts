/** Admin use cases: partners and their credentials (decisions.md §2). */
import { type KeyScope, generateApiKey, generateHmacSecret, hashApiKey } from '../auth/credentials';
import { errors } from '../domain/errors';
import { newId } from '../domain/ids';
import type { KycStatus, Partner, PartnerStatus } from '../domain/partner';
import { SECRET_PURPOSE, secretBox } from '../secrets';
import * as apiKeys from '../store/api-keys';
import type { Page } from '../store/paging';
import * as partners from '../store/partners';

export interface NewPartner {
  name: string;
  serviceFeePercentage: number;
  status: PartnerStatus;
  kycStatus: KycStatus;
  rateLimitPerMinute: number | null;
  branding: Partner['branding'];
}

export async function createPartner(input: NewPartner): Promise<Partner> {
  const now = new Date().toISOString();
  return partners.createPartner({ partnerId: newId.partner(), ...input, createdAt: now, updatedAt: now });
}

export async function getPartner(partnerId: string): Promise<Partner> {
  const partner = await partners.getPartner(partnerId);
  if (partner === undefined) throw errors.partnerNotFound();
  return partner;
}

export const listPartners = partners.listPartners;

export const updatePartner = (partnerId: string, changes: partners.PartnerChanges) =>
  partners.updatePartner(partnerId, changes, new Date().toISOString());

export interface IssuedApiKey {
  keyId: string;
  apiKey: string;
  hmacSecret: string;
  scope: KeyScope;
  partnerId: string | undefined;
}

/**
 * Creates an API key and its HMAC secret. Steps: generate both; seal the HMAC secret (envelope encryption);
 * store the key's hash, the sealed secret and the id pointer in one transaction (atomic, and conditional on
 * the partner existing for a partner key). The plaintext key and secret are returned once and never stored.
 */
export async function issueApiKey(scope: KeyScope, partnerId?: string): Promise<IssuedApiKey> {
  const apiKey = generateApiKey(scope);
  const hmacSecret = generateHmacSecret();
  const keyId = newId.apiKey();
  await apiKeys.createApiKey({
    keyId,
    keyHash: hashApiKey(apiKey),
    scope,
    partnerId,
    hmacSecret: await secretBox.seal(hmacSecret, SECRET_PURPOSE.hmac),
    createdAt: new Date().toISOString(),
  });
  return { keyId, apiKey, hmacSecret, scope, partnerId };
}

/**
 * A partner's API keys, newest first, paged, without hash or secret (what the admin console lists to revoke
 * one); 404 PARTNER_NOT_FOUND for an unknown partner.
 */
export async function listPartnerApiKeys(partnerId: string, page: { limit: number; cursor?: string | undefined }): Promise<Page<apiKeys.ApiKeySummary>> {
  const [partner, found] = await Promise.all([partners.getPartner(partnerId), apiKeys.listPartnerApiKeys(partnerId, page)]);
  if (partner === undefined) throw errors.partnerNotFound();
  return found;
}

export const revokeApiKey = apiKeys.revokeApiKey;
