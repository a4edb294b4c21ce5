/**
 * Partner webhook endpoints (decisions.md §2): items under the partner (`PARTNER#<id>` /
 * `WEBHOOK_ENDPOINT#<id>`), listed by `begins_with(sk)`. The signing secret is stored sealed
 * (`lib/secrets`, purpose `webhook`) in `secret`, and never leaves the store except to sign a delivery.
 */
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AuditEvent } from '../domain/audit';
import { type BreakerState, LEGACY_ENDPOINT_BREAKER, NEW_ENDPOINT_BREAKER, type StoredBreaker } from '../domain/endpoint-breaker';
import { errors } from '../domain/errors';
import type { PartnerEvent, WebhookEndpoint } from '../domain/webhooks';
import type { SealedSecret } from '../domain/sealed-secret';
import { putAuditEvent } from './audit-events';
import { failedConditions, writeIfCondition } from './conditions';
import { documentClient, tableName } from './dynamo';
import { keys } from './keys';
import { transactWrite } from './transact';

/** Endpoints per partner at most: each event fans out to every subscribed endpoint, so this bounds a fan-out. */
export const MAX_ENDPOINTS_PER_PARTNER = 20;

/** The partner item's count of its endpoints, kept in the same transactions that create and delete them. */
const COUNT = 'webhookEndpointCount';

export const toWebhookEndpoint = (item: Record<string, unknown>): WebhookEndpoint => ({
  id: item.id as string,
  partnerId: item.partnerId as string,
  name: item.name as string,
  url: item.url as string,
  events: item.events as PartnerEvent[],
  createdAt: item.createdAt as string,
  breaker: toStoredBreaker(item).state,
});

/** Every endpoint of a partner (a partner has a handful: one strongly consistent Query, paged through). */
export async function listWebhookEndpoints(partnerId: string): Promise<WebhookEndpoint[]> {
  const { pk, skPrefix } = keys.webhookEndpointPrefix(partnerId);
  const found: WebhookEndpoint[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await documentClient.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    found.push(...(page.Items ?? []).map(toWebhookEndpoint));
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  return found;
}

/**
 * Creates an endpoint with its sealed secret, atomically with the partner's endpoint count and the audit
 * event: the count is raised only while the partner exists and has fewer than {@link MAX_ENDPOINTS_PER_PARTNER}
 * endpoints, so concurrent creates can never exceed it. 404 PARTNER_NOT_FOUND, 409 WEBHOOK_ENDPOINT_LIMIT_REACHED.
 */
export async function createWebhookEndpoint(endpoint: WebhookEndpoint, secret: SealedSecret, audit: AuditEvent): Promise<void> {
  try {
    await transactWrite([
      {
        Update: {
          TableName: tableName,
          Key: keys.partner(endpoint.partnerId),
          UpdateExpression: 'SET #count = if_not_exists(#count, :zero) + :one',
          ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(#count) OR #count < :max)',
          ExpressionAttributeNames: { '#count': COUNT },
          ExpressionAttributeValues: { ':zero': 0, ':one': 1, ':max': MAX_ENDPOINTS_PER_PARTNER },
        },
      },
      {
        Put: {
          TableName: tableName,
          // A new endpoint's breaker: its first delivery probes it (docs/webhooks.md).
          Item: { ...keys.webhookEndpoint(endpoint.partnerId, endpoint.id), entity: 'webhookEndpoint', ...endpoint, secret, breaker: endpoint.breaker ?? NEW_ENDPOINT_BREAKER },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      putAuditEvent(audit),
    ]);
  } catch (error) {
    if (!failedConditions(error).includes(0)) throw error;
    const { Item } = await documentClient.send(
      new GetCommand({ TableName: tableName, Key: keys.partner(endpoint.partnerId), ConsistentRead: true }),
    );
    throw Item === undefined ? errors.partnerNotFound() : errors.webhookEndpointLimitReached(MAX_ENDPOINTS_PER_PARTNER);
  }
}

export type { StoredBreaker };

/** A breaker as stored: the fields of {@link BreakerState}, or those a breaker written before leases had (a probe's). */
type StoredBreakerState = Partial<BreakerState> & { probeUntil?: number };

/** A stored breaker's state; one written before leases counts its running probe (`probeUntil`) as its one lease. */
function storedBreakerState({ probeUntil, ...stored }: StoredBreakerState): BreakerState {
  const { answeredAt, openUntil, cooldownMs, probesToClose, slow, leases } = { ...NEW_ENDPOINT_BREAKER, ...stored };
  return { answeredAt, openUntil, cooldownMs, probesToClose, slow, leases: stored.leases ?? (probeUntil !== undefined && probeUntil > 0 ? [probeUntil] : leases) };
}

/** An item without a breaker is an endpoint created before breakers were kept: closed. */
function toStoredBreaker(item: Record<string, unknown>): StoredBreaker {
  return {
    state: item.breaker === undefined ? LEGACY_ENDPOINT_BREAKER : storedBreakerState(item.breaker as StoredBreakerState),
    revision: (item.breakerRevision as number | undefined) ?? 0,
  };
}

/**
 * An endpoint, its sealed secret (to sign a delivery) and its breaker, or `undefined` once it is deleted.
 * Strongly consistent.
 */
export async function getWebhookEndpointWithSecret(
  partnerId: string,
  endpointId: string,
): Promise<{ endpoint: WebhookEndpoint; secret: SealedSecret; breaker: StoredBreaker } | undefined> {
  const { Item } = await documentClient.send(
    new GetCommand({ TableName: tableName, Key: keys.webhookEndpoint(partnerId, endpointId), ConsistentRead: true }),
  );
  return Item === undefined ? undefined : { endpoint: toWebhookEndpoint(Item), secret: Item.secret as SealedSecret, breaker: toStoredBreaker(Item) };
}

/** An endpoint's breaker (strongly consistent), or `undefined` once the endpoint is deleted. */
export async function getBreaker(partnerId: string, endpointId: string): Promise<StoredBreaker | undefined> {
  const { Item } = await documentClient.send(
    new GetCommand({
      TableName: tableName,
      Key: keys.webhookEndpoint(partnerId, endpointId),
      ConsistentRead: true,
      ProjectionExpression: 'pk, breaker, breakerRevision',
    }),
  );
  return Item === undefined ? undefined : toStoredBreaker(Item);
}

/**
 * Writes an endpoint's breaker if it is still at the revision it was decided from (and the endpoint still
 * exists); `false` otherwise (another consumer changed it first: read again and decide again).
 */
export function putBreaker(partnerId: string, endpointId: string, state: BreakerState, readRevision: number): Promise<boolean> {
  return writeIfCondition(
    documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.webhookEndpoint(partnerId, endpointId),
        UpdateExpression: 'SET breaker = :state, breakerRevision = :next',
        ConditionExpression: `attribute_exists(pk) AND ${readRevision === 0 ? 'attribute_not_exists(breakerRevision)' : 'breakerRevision = :read'}`,
        ExpressionAttributeValues: { ':state': state, ':next': readRevision + 1, ...(readRevision === 0 ? {} : { ':read': readRevision }) },
      }),
    ),
  );
}

/**
 * Deletes an endpoint, atomically with the partner's endpoint count and the audit event; 404
 * WEBHOOK_ENDPOINT_NOT_FOUND for an unknown one (or one of another partner). Its pending deliveries fail at
 * their next attempt ("endpoint deleted").
 */
export async function deleteWebhookEndpoint(partnerId: string, endpointId: string, audit: AuditEvent): Promise<void> {
  try {
    await transactWrite([
      {
        Delete: {
          TableName: tableName,
          Key: keys.webhookEndpoint(partnerId, endpointId),
          ConditionExpression: 'attribute_exists(pk)',
        },
      },
      {
        Update: {
          TableName: tableName,
          Key: keys.partner(partnerId),
          // A partner item without the count (endpoints written before it was kept) is taken as holding this one.
          UpdateExpression: 'SET #count = if_not_exists(#count, :one) - :one',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#count': COUNT },
          ExpressionAttributeValues: { ':one': 1 },
        },
      },
      putAuditEvent(audit),
    ]);
  } catch (error) {
    if (failedConditions(error).includes(0)) throw errors.webhookEndpointNotFound();
    throw error;
  }
}
