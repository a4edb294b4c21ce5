/**
 * Admin use cases: partners and their credentials (decisions.md §2). Every change an admin makes here is recorded
 * in the audit log in the same transaction as the change (`lib/domain/audit.ts`): a change never exists without
 * its event, nor an event without its change. `by` is the caller the event names (`details.admin`).
 */
import { type KeyScope, generateApiKey, generateHmacSecret, hashApiKey } from '../auth/credentials';
import { adminOf, newAuditEvent, partnerChangeDetails, partnerSettingsDetails } from '../domain/audit';
import type { Caller } from '../domain/caller';
import { errors } from '../domain/errors';
import { newId } from '../domain/ids';
import type { ApiKeyRef, ApiKeySummary, StoredApiKey } from '../auth/api-keys';
import type { AuditEvent } from '../domain/audit';
import type { Page } from '../domain/page';
import type { KycStatus, Partner, PartnerChanges, PartnerForUpdate, PartnerStatus, PartnerUpdate } from '../domain/partner';
import { SECRET_PURPOSE } from '../domain/sealed-secret';
import type { PartnerReader } from './ports/partner-readers';
import type { SecretSealer } from './ports/secret-sealer';

type PageRequest = { limit: number; cursor?: string | undefined };

/**
 * The partners and their API keys in the table (`lib/store/partners.ts`, `lib/store/api-keys.ts`), and the secret
 * box that seals a new key's HMAC secret; wired in `lib/composition/partners.ts`.
 */
export interface PartnerDeps {
  partners: PartnerReader & {
    /** With its audit event, in one write. */
    createPartner(partner: Partner, audit: AuditEvent): Promise<Partner>;
    /** Strongly consistent, with the revision an update is conditional on. */
    getPartnerForUpdate(partnerId: string): Promise<PartnerForUpdate | undefined>;
    /** The given fields and the audit event, in one write conditional on the partner as read. */
    updatePartner(seen: PartnerForUpdate, changes: PartnerChanges, now: string, audit: AuditEvent): Promise<PartnerUpdate>;
    listPartners(page: PageRequest): Promise<Page<Partner>>;
  };
  apiKeys: {
    /** With its pointer and audit event, in one write (conditional on the partner existing for a partner key). */
    createApiKey(apiKey: StoredApiKey, audit: AuditEvent): Promise<void>;
    listPartnerApiKeys(partnerId: string, page: PageRequest): Promise<Page<ApiKeySummary>>;
    listPlatformApiKeys(page: PageRequest): Promise<Page<ApiKeySummary>>;
    /** Strongly consistent; `undefined` for an unknown or revoked id. */
    findApiKeyById(keyId: string): Promise<ApiKeyRef | undefined>;
    /** With the audit event, in one write (404 API_KEY_NOT_FOUND when another revocation got there first). */
    revokeApiKey(key: ApiKeyRef, audit: AuditEvent): Promise<void>;
  };
  secrets: SecretSealer;
}

export interface NewPartner {
  name: string;
  serviceFeePercentage: number;
  status: PartnerStatus;
  kycStatus: KycStatus;
  rateLimitPerMinute: number | null;
  branding: Partner['branding'];
}

/**
 * Creates a partner with a new id. One transaction (atomic): the partner and its `partner.created` event (who, and
 * the settings as created). `by` is optional only for callers outside a request (a test seeding data).
 */
export async function createPartner(deps: Pick<PartnerDeps, 'partners'>, input: NewPartner, by?: Caller): Promise<Partner> {
  const now = new Date();
  const partner: Partner = { partnerId: newId.partner(), ...input, createdAt: now.toISOString(), updatedAt: now.toISOString() };
  const audit = newAuditEvent(
    { type: 'partner.created', partnerId: partner.partnerId, resourceType: 'partner', resourceId: partner.partnerId, details: { admin: adminOf(by), ...partnerSettingsDetails(partner) } },
    now,
  );
  return deps.partners.createPartner(partner, audit);
}

export async function getPartner(deps: Pick<PartnerDeps, 'partners'>, partnerId: string): Promise<Partner> {
  const partner = await deps.partners.getPartner(partnerId);
  if (partner === undefined) throw errors.partnerNotFound();
  return partner;
}

export const listPartners = (deps: Pick<PartnerDeps, 'partners'>, page: PageRequest) => deps.partners.listPartners(page);

/**
 * Reads an update may lose to concurrent updates of the same partner before it answers 503 (retry shortly). After
 * each loss it waits a random time within a window that doubles (40 ms, 80 ms, … up to 1 s: "full jitter"), so
 * concurrent updates spread out rather than collide again: 20 admins saving the same partner at once all get through.
 */
const UPDATE_ATTEMPTS = 10;
const retryWindowMs = (attempt: number) => Math.min(1_000, 20 * 2 ** attempt);

/**
 * Changes the fields given (only those). Steps: read the partner (strongly consistent; 404 PARTNER_NOT_FOUND);
 * then one transaction (atomic): the update, conditional on the partner being still as read, and its
 * `partner.updated` event (who, the fields set, each after and before). A concurrent update in between is read
 * again and the change applied to it (503 SERVICE_UNAVAILABLE after {@link UPDATE_ATTEMPTS} such losses).
 * Answers the partner as written.
 */
export async function updatePartner(deps: Pick<PartnerDeps, 'partners'>, partnerId: string, changes: PartnerChanges, by: Caller): Promise<Partner> {
  const given = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)) as PartnerChanges;
  for (let attempt = 1; ; attempt++) {
    const seen = await deps.partners.getPartnerForUpdate(partnerId);
    if (seen === undefined) throw errors.partnerNotFound();
    const current = seen.partner;
    const now = new Date();
    const details = { admin: adminOf(by), ...partnerChangeDetails(current, given) };
    const audit = newAuditEvent({ type: 'partner.updated', partnerId, resourceType: 'partner', resourceId: partnerId, details }, now);
    const outcome = await deps.partners.updatePartner(seen, given, now.toISOString(), audit);
    if (outcome === 'updated') return { ...current, ...given, updatedAt: now.toISOString() };
    if (outcome === 'gone') throw errors.partnerNotFound();
    if (attempt >= UPDATE_ATTEMPTS) throw errors.contended();
    await new Promise((resolve) => setTimeout(resolve, Math.random() * retryWindowMs(attempt)));
  }
}

export interface IssuedApiKey {
  keyId: string;
  apiKey: string;
  hmacSecret: string;
  scope: KeyScope;
  partnerId: string | undefined;
}

/**
 * Creates an API key and its HMAC secret. Steps: generate both; seal the HMAC secret (envelope encryption);
 * store the key's hash, the sealed secret, the id pointer and the `api_key.created` event (who, the key's id and
 * scope: never the key, its hash or its secret) in one transaction (atomic, and conditional on the partner
 * existing for a partner key). The plaintext key and secret are returned once and never stored. `by` is optional
 * only for callers outside a request (a test seeding data).
 */
export async function issueApiKey(deps: Pick<PartnerDeps, 'apiKeys' | 'secrets'>, scope: KeyScope, partnerId?: string, by?: Caller): Promise<IssuedApiKey> {
  const apiKey = generateApiKey(scope);
  const hmacSecret = generateHmacSecret();
  const keyId = newId.apiKey();
  const now = new Date();
  const audit = newAuditEvent(
    { type: 'api_key.created', partnerId: partnerId ?? null, resourceType: 'api_key', resourceId: keyId, details: { admin: adminOf(by), scope } },
    now,
  );
  await deps.apiKeys.createApiKey(
    {
      keyId,
      keyHash: hashApiKey(apiKey),
      scope,
      partnerId,
      hmacSecret: await deps.secrets.seal(hmacSecret, SECRET_PURPOSE.hmac),
      createdAt: now.toISOString(),
    },
    audit,
  );
  return { keyId, apiKey, hmacSecret, scope, partnerId };
}

/**
 * A partner's API keys, newest first, paged, without hash or secret (what the admin console lists to revoke
 * one); 404 PARTNER_NOT_FOUND for an unknown partner.
 */
export async function listPartnerApiKeys(deps: Pick<PartnerDeps, 'partners' | 'apiKeys'>, partnerId: string, page: PageRequest): Promise<Page<ApiKeySummary>> {
  const [, found] = await Promise.all([getPartner(deps, partnerId), deps.apiKeys.listPartnerApiKeys(partnerId, page)]);
  return found;
}

/** The platform-wide API keys (of no partner), newest first, paged, without hash or secret. */
export const listPlatformApiKeys = (deps: Pick<PartnerDeps, 'apiKeys'>, page: PageRequest): Promise<Page<ApiKeySummary>> => deps.apiKeys.listPlatformApiKeys(page);

/**
 * Revokes a key (partner-scoped or platform-wide). Steps: find it by id (strongly consistent; 404
 * API_KEY_NOT_FOUND for an unknown or already revoked id); then one transaction (atomic, conditional on the key
 * still existing): the key and its pointer deleted, and the `api_key.revoked` event (who, the key's scope, its
 * partner). A concurrent revocation of the same key makes one 204 and one 404, and one event.
 */
export async function revokeApiKey(deps: Pick<PartnerDeps, 'apiKeys'>, keyId: string, by: Caller): Promise<void> {
  const key = await deps.apiKeys.findApiKeyById(keyId);
  if (key === undefined) throw errors.apiKeyNotFound();
  const audit = newAuditEvent(
    { type: 'api_key.revoked', partnerId: key.partnerId ?? null, resourceType: 'api_key', resourceId: keyId, details: { admin: adminOf(by), scope: key.scope } },
    new Date(),
  );
  await deps.apiKeys.revokeApiKey(key, audit);
}
