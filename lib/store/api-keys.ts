/**
 * API keys: found by the SHA-256 of the key; the HMAC secret stored sealed (envelope-encrypted). A partner's keys
 * are also listed per partner (gsi1 `APIKEYS#<partner_id>`), without their hash or secret.
 */
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { KeyScope } from '../auth/credentials';
import { errors } from '../domain/errors';
import type { SealedSecret } from '../secrets/secret-box';
import { failedConditions, isConditionFailure } from './conditions';
import { documentClient, tableName } from './dynamo';
import { keys } from './keys';
import { type Page, queryPage } from './paging';

export interface StoredApiKey {
  keyId: string;
  keyHash: string;
  scope: KeyScope;
  /** Present on partner-scoped keys only. */
  partnerId: string | undefined;
  hmacSecret: SealedSecret;
  createdAt: string;
}

/** What may be shown of a key once issued: never its hash or its secret. */
export type ApiKeySummary = Pick<StoredApiKey, 'keyId' | 'scope' | 'partnerId' | 'createdAt'>;

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
 * Writes the key and its id pointer in one transaction; a partner key also requires its partner to exist at
 * that moment (404 PARTNER_NOT_FOUND otherwise).
 */
export async function createApiKey(apiKey: StoredApiKey): Promise<void> {
  const transactItems = [
    {
      Put: {
        TableName: tableName,
        Item: {
          ...keys.apiKey(apiKey.keyHash),
          ...(apiKey.partnerId === undefined ? {} : keys.apiKeyIndex(apiKey.partnerId, apiKey.keyId, apiKey.createdAt)),
          entity: 'apiKey',
          ...apiKey,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    {
      Put: {
        TableName: tableName,
        Item: { ...keys.apiKeyId(apiKey.keyId), entity: 'apiKeyId', keyId: apiKey.keyId, keyHash: apiKey.keyHash },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    ...(apiKey.partnerId === undefined
      ? []
      : [{ ConditionCheck: { TableName: tableName, Key: keys.partner(apiKey.partnerId), ConditionExpression: 'attribute_exists(pk)' } }]),
  ];
  try {
    await documentClient.send(new TransactWriteCommand({ TransactItems: transactItems }));
  } catch (error) {
    if (failedConditions(error).includes(2)) throw errors.partnerNotFound();
    throw error;
  }
}

/** Strongly consistent, so a revoked key is refused on the very next request. */
export async function findApiKey(keyHash: string): Promise<StoredApiKey | undefined> {
  const { Item } = await documentClient.send(
    new GetCommand({ TableName: tableName, Key: keys.apiKey(keyHash), ConsistentRead: true }),
  );
  return Item === undefined ? undefined : toApiKey(Item);
}

/**
 * A partner's keys, newest first, paged. A revoked key is deleted, so it is not listed. Keys issued before the
 * index existed carry no gsi1 keys and are not listed until backfilled.
 */
export function listPartnerApiKeys(partnerId: string, page: { limit: number; cursor?: string | undefined }): Promise<Page<ApiKeySummary>> {
  return queryPage({
    index: 'gsi1',
    partition: keys.apiKeysOf(partnerId),
    ...page,
    toItem: (item) => summaryOf(toApiKey(item)),
  });
}

/** Deletes the key and its pointer atomically; 404 API_KEY_NOT_FOUND for an unknown (or already revoked) id. */
export async function revokeApiKey(keyId: string): Promise<void> {
  const { Item } = await documentClient.send(
    new GetCommand({ TableName: tableName, Key: keys.apiKeyId(keyId), ConsistentRead: true }),
  );
  if (Item === undefined) throw errors.apiKeyNotFound();
  try {
    await documentClient.send(
      new TransactWriteCommand({
        TransactItems: [
          { Delete: { TableName: tableName, Key: keys.apiKeyId(keyId), ConditionExpression: 'attribute_exists(pk)' } },
          { Delete: { TableName: tableName, Key: keys.apiKey(Item.keyHash as string) } },
        ],
      }),
    );
  } catch (error) {
    if (isConditionFailure(error)) throw errors.apiKeyNotFound();
    throw error;
  }
}
