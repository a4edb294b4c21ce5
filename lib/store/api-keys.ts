/**
 * API keys: found by the SHA-256 of the key; the HMAC secret stored sealed (envelope-encrypted). Listed newest
 * first on gsi1, a partner's keys under `APIKEYS#<partner_id>` and the platform-wide ones under `APIKEYS`, without
 * their hash or secret. An admin's issue and revocation write their audit event in the same transaction.
 *
 * Each key is held by its key item and read copies ({@link API_KEY_COPIES} in all), written and deleted with it in one
 * transaction, so a big partner's strongly consistent key reads are spread over several partitions. A copy exists only
 * while its key item does: the issue writes both, the revocation deletes both, and the backfill that copies older keys
 * writes a copy only on the condition that its key item still exists.
 */
import { randomInt } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { KeyScope } from '../auth/credentials';
import type { AuditEvent } from '../domain/audit';
import { errors } from '../domain/errors';
import { putAuditEvent } from './audit-events';
import { failedConditions } from './conditions';
import { documentClient, tableName } from './dynamo';
import { API_KEY_COPIES, keys, type TableKey } from './keys';
import { type Page, queryPage } from './paging';
import { transactWrite } from './transact';
import type { ApiKeyRef, ApiKeySummary, StoredApiKey } from '../auth/api-keys';
import type { SealedSecret } from '../domain/sealed-secret';

export type { ApiKeyRef, ApiKeySummary, StoredApiKey };

const summaryOf = ({ keyId, scope, partnerId, createdAt }: StoredApiKey): ApiKeySummary => ({ keyId, scope, partnerId, createdAt });

export const toApiKey = (item: Record<string, unknown>): StoredApiKey => ({
  keyId: item.keyId as string,
  keyHash: item.keyHash as string,
  scope: item.scope as KeyScope,
  partnerId: item.partnerId as string | undefined,
  hmacSecret: item.hmacSecret as SealedSecret,
  createdAt: item.createdAt as string,
});

/**
 * A key's gsi1 keys: its partner's partition, or the platform-wide one for a key of no partner. What a key is
 * written with, and what `npm run backfill:api-keys` gives the keys issued before the index existed.
 */
export const apiKeyIndexOf = (key: Pick<StoredApiKey, 'keyId' | 'partnerId' | 'createdAt'>) =>
  key.partnerId === undefined ? keys.platformApiKeyIndex(key.keyId, key.createdAt) : keys.apiKeyIndex(key.partnerId, key.keyId, key.createdAt);

/** The numbers of a key's read copies besides the key item (copy 0). */
export const API_KEY_COPY_NUMBERS: readonly number[] = Array.from({ length: API_KEY_COPIES - 1 }, (_, i) => i + 1);

/**
 * Read copy `copy` of a key, as an item: the key's own fields, without the gsi1 keys (a list would show the key once per
 * copy), and `entity: apiKeyCopy`, so nothing that looks for keys by their entity (the backfill's Scan) takes it for one.
 */
export const apiKeyCopyItem = (apiKey: StoredApiKey, copy: number) => ({
  ...keys.apiKeyCopy(apiKey.keyHash, copy),
  entity: 'apiKeyCopy',
  copy,
  ...apiKey,
});

/**
 * Writes the key (marked with its number of copies, so the backfill can tell it has them), its read copies, its id
 * pointer (with the key's scope and partner, for its revocation's audit event) and its audit event in one transaction
 * (at most 11 items, far below DynamoDB's 100); a partner key also requires its partner to exist at that moment (404
 * PARTNER_NOT_FOUND otherwise: then nothing is written, the event neither).
 */
export async function createApiKey(apiKey: StoredApiKey, audit: AuditEvent): Promise<void> {
  const partnerCheck =
    apiKey.partnerId === undefined
      ? []
      : [{ ConditionCheck: { TableName: tableName, Key: keys.partner(apiKey.partnerId), ConditionExpression: 'attribute_exists(pk)' } }];
  const transactItems = [
    {
      Put: {
        TableName: tableName,
        Item: { ...keys.apiKey(apiKey.keyHash), ...apiKeyIndexOf(apiKey), entity: 'apiKey', ...apiKey, copies: API_KEY_COPIES },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    {
      Put: {
        TableName: tableName,
        Item: { ...keys.apiKeyId(apiKey.keyId), entity: 'apiKeyId', keyId: apiKey.keyId, keyHash: apiKey.keyHash, scope: apiKey.scope, partnerId: apiKey.partnerId },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    ...partnerCheck,
    putAuditEvent(audit),
    ...API_KEY_COPY_NUMBERS.map((copy) => ({ Put: { TableName: tableName, Item: apiKeyCopyItem(apiKey, copy), ConditionExpression: 'attribute_not_exists(pk)' } })),
  ];
  try {
    await transactWrite(transactItems);
  } catch (error) {
    if (partnerCheck.length > 0 && failedConditions(error).includes(2)) throw errors.partnerNotFound();
    throw error;
  }
}

/** Which copy of a key a read takes: one at random, so the reads of a busy key spread evenly over its copies. */
export const randomApiKeyCopy = (): number => randomInt(API_KEY_COPIES);

const getConsistent = async (key: TableKey) =>
  (await documentClient.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }))).Item;

/**
 * Strongly consistent, so a revoked key is refused on the very next request (its revocation deleted every copy). Reads
 * copy `copy` (by default one at random; 0 is the key item); a missing copy is read again from the key item.
 */
export async function findApiKey(keyHash: string, copy = randomApiKeyCopy()): Promise<StoredApiKey | undefined> {
  return apiKeyFromCopy(keyHash, copy, await getConsistent(keys.apiKeyCopy(keyHash, copy)));
}

/**
 * The key from its copy `copy` as read (`item`, undefined when missing). A missing copy other than the key item is
 * either a revoked key or one issued before copies existed and not yet backfilled: the key item tells which (one more
 * strongly consistent read, only then). Either way the caller learns nothing of which copy answered.
 */
export async function apiKeyFromCopy(keyHash: string, copy: number, item: Record<string, unknown> | undefined): Promise<StoredApiKey | undefined> {
  const found = item ?? (copy === 0 ? undefined : await getConsistent(keys.apiKey(keyHash)));
  return found === undefined ? undefined : toApiKey(found);
}

const listIn = (partition: string, page: { limit: number; cursor?: string | undefined }): Promise<Page<ApiKeySummary>> =>
  queryPage({ index: 'gsi1', partition, ...page, toItem: (item) => summaryOf(toApiKey(item)) });

/**
 * A partner's keys, newest first, paged. A revoked key is deleted, so it is not listed. Keys issued before the
 * index existed carry no gsi1 keys and are not listed until backfilled (`npm run backfill:api-keys`).
 */
export const listPartnerApiKeys = (partnerId: string, page: { limit: number; cursor?: string | undefined }) => listIn(keys.apiKeysOf(partnerId), page);

/** The platform-wide keys (of no partner), newest first, paged; as {@link listPartnerApiKeys}. */
export const listPlatformApiKeys = (page: { limit: number; cursor?: string | undefined }) => listIn(keys.platformApiKeys, page);


/**
 * The key with id `keyId`, from its pointer (strongly consistent); `undefined` for an unknown or revoked id. A
 * pointer written before it held the key's scope is followed to the key itself (one more read, for old keys only).
 */
export async function findApiKeyById(keyId: string): Promise<ApiKeyRef | undefined> {
  const { Item: pointer } = await documentClient.send(
    new GetCommand({ TableName: tableName, Key: keys.apiKeyId(keyId), ConsistentRead: true }),
  );
  if (pointer === undefined) return undefined;
  const keyHash = pointer.keyHash as string;
  if (pointer.scope !== undefined) return { keyId, keyHash, scope: pointer.scope as KeyScope, partnerId: pointer.partnerId as string | undefined };
  // The key item itself: a revocation is rare, and need not spread its read over the copies.
  const key = await findApiKey(keyHash, 0);
  return key === undefined ? undefined : { keyId, keyHash, scope: key.scope, partnerId: key.partnerId };
}

/**
 * Deletes the key, its read copies and its pointer, and writes the audit event, in one transaction conditional on the
 * pointer still existing: 404 API_KEY_NOT_FOUND if another revocation got there first (then no event is written). Once
 * it commits no copy is left to read, so the key stops at once. A key issued before copies has none: deleting a missing
 * copy is a no-op, so the deletes are unconditional.
 */
export async function revokeApiKey(key: ApiKeyRef, audit: AuditEvent): Promise<void> {
  try {
    await transactWrite([
      { Delete: { TableName: tableName, Key: keys.apiKeyId(key.keyId), ConditionExpression: 'attribute_exists(pk)' } },
      { Delete: { TableName: tableName, Key: keys.apiKey(key.keyHash) } },
      putAuditEvent(audit),
      ...API_KEY_COPY_NUMBERS.map((copy) => ({ Delete: { TableName: tableName, Key: keys.apiKeyCopy(key.keyHash, copy) } })),
    ]);
  } catch (error) {
    if (failedConditions(error).includes(0)) throw errors.apiKeyNotFound();
    throw error;
  }
}
