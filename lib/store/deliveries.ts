/**
 * Partner webhook deliveries (decisions.md §2, §8): one item per (partner event, endpoint), listed per partner
 * (gsi1), and in the outbox (gsi2 `OUTBOX`, sparse) while pending: see `keys.outboxIndex`.
 */
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AuditEvent } from '../domain/audit';
import { errors } from '../domain/errors';
import type { AttemptRecord, DeliveryStatus, PartnerEvent, WebhookDelivery } from '../domain/webhooks';
import { putAuditEvent } from './audit-events';
import { failedConditions, writeIfCondition } from './conditions';
import { documentClient, tableName } from './dynamo';
import { DELIVERY_LIST_SHARDS, keys, PARKED_SHARDS } from './keys';
import { transactWrite } from './transact';
import { type Page, queryShardedPage, shardedSources, statusFilter } from './paging';

/** How long after its creation a pending delivery that no message has picked up is relayed again. */
export const OUTBOX_GRACE_MS = 30_000;

/** A parked delivery looked at again needs no write while its outbox key is at least this far ahead. */
const PARK_MARGIN_MS = 5 * 60_000;

export const toDelivery = (item: Record<string, unknown>): WebhookDelivery => ({
  id: item.id as string,
  eventId: item.eventId as string,
  endpointId: item.endpointId as string,
  partnerId: item.partnerId as string,
  event: item.event as PartnerEvent,
  svcTxId: item.svcTxId as string,
  payload: item.payload as string,
  status: item.status as DeliveryStatus,
  attempts: item.attempts as number,
  lastHttpStatus: (item.lastHttpStatus as number | null | undefined) ?? null,
  lastError: (item.lastError as string | null | undefined) ?? null,
  nextAttemptAt: item.nextAttemptAt as number | undefined,
  leaseUntil: item.leaseUntil as number | undefined,
  relayAfter: typeof item.gsi2sk === 'string' ? Date.parse(keys.outboxRelayAfter(item.gsi2sk)) : undefined,
  parked: typeof item.gsi4pk === 'string',
  createdAt: item.createdAt as string,
  updatedAt: item.updatedAt as string,
});

const outboxAfter = (deliveryId: string, epochMs: number) =>
  keys.outboxIndex(deliveryId, new Date(epochMs + OUTBOX_GRACE_MS).toISOString());

/** A new delivery's item: listed under its partner, and in the outbox until it is finished. */
export const deliveryItem = (delivery: WebhookDelivery) => ({
  ...keys.webhookDelivery(delivery.id),
  ...keys.webhookDeliveryIndex(delivery.partnerId, delivery.id, delivery.createdAt),
  ...(delivery.status === 'pending'
    ? outboxAfter(delivery.id, Date.parse(delivery.createdAt))
    : {}),
  entity: 'webhookDelivery',
  ...delivery,
});

/** The `Put` of a new delivery inside a TransactWriteItems (created once: its id is new). */
export const putNewDelivery = (delivery: WebhookDelivery) => ({
  Put: { TableName: tableName, Item: deliveryItem(delivery), ConditionExpression: 'attribute_not_exists(pk)' },
});


/** Strongly consistent: the consumer decides from it whether an attempt is still to be made. */
export async function getDelivery(deliveryId: string): Promise<WebhookDelivery | undefined> {
  const { Item } = await documentClient.send(
    new GetCommand({ TableName: tableName, Key: keys.webhookDelivery(deliveryId), ConsistentRead: true }),
  );
  return Item === undefined ? undefined : toDelivery(Item);
}

/** A partner's deliveries, newest first, optionally of one status (decisions.md §2, §9). */
export function listDeliveries(
  partnerId: string,
  page: { status?: DeliveryStatus | undefined; limit: number; cursor?: string | undefined },
): Promise<Page<WebhookDelivery>> {
  return queryShardedPage({
    list: `deliveries/${partnerId}`,
    sources: shardedSources('gsi5', DELIVERY_LIST_SHARDS, (shard) => keys.deliveryShard(partnerId, shard), { index: 'gsi1', partition: keys.deliveriesOf(partnerId) }),
    limit: page.limit,
    cursor: page.cursor,
    filter: statusFilter(page.status),
    toItem: toDelivery,
  });
}

/*
 * Attempt bookkeeping, beside the delivery's own fields (epoch milliseconds, absent when not in force):
 * - `leaseUntil`: an attempt is running until then; no other attempt may be claimed before it passes (a
 *   duplicate message cannot start a second, concurrent attempt);
 * - `nextAttemptAt`: after a failed attempt, the next one is not due before then (the backoff).
 * While the delivery is pending its outbox sort key is kept just after whichever of the two is in force, so
 * the relay's sweep re-sends a message only once the one that should have come is overdue.
 */

const pendingCondition = '#status = :pending AND attempts = :attempts';
const leaseFree = '(attribute_not_exists(leaseUntil) OR leaseUntil <= :now)';

/**
 * Claims attempt `attempts + 1` of a pending delivery: one conditional update that holds only if no attempt
 * was claimed since `attempts` was read, no lease is running, and the backoff has passed (`dueBy`: now plus
 * a small tolerance for a queue's clock). `false` when any of that does not hold (another consumer has it,
 * or the message came early): the caller acknowledges and does nothing.
 */
export async function claimAttempt(
  delivery: Pick<WebhookDelivery, 'id' | 'attempts'>,
  at: { now: number; dueBy: number; leaseUntil: number },
): Promise<boolean> {
  const outbox = outboxAfter(delivery.id, at.leaseUntil);
  return writeIfCondition(
    documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.webhookDelivery(delivery.id),
        UpdateExpression: 'SET attempts = attempts + :one, leaseUntil = :leaseUntil, updatedAt = :updatedAt, gsi2pk = :outboxPk, gsi2sk = :outboxSk REMOVE gsi4pk, gsi4sk',
        ConditionExpression: `${pendingCondition} AND ${leaseFree} AND (attribute_not_exists(nextAttemptAt) OR nextAttemptAt <= :dueBy)`,
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':pending': 'pending',
          ':attempts': delivery.attempts,
          ':now': at.now,
          ':dueBy': at.dueBy,
          ':one': 1,
          ':leaseUntil': at.leaseUntil,
          ':updatedAt': new Date(at.now).toISOString(),
          ':outboxPk': outbox.gsi2pk,
          ':outboxSk': outbox.gsi2sk,
        },
      }),
    ),
  );
}

/**
 * Parks a pending delivery that no attempt is running on: its endpoint cannot take it now (its breaker open, or
 * every lease of a slow endpoint taken). It enters the endpoint's parked index, where the consumer finds it to wake
 * it, and its outbox sort key moves to `relayAfter` (the sweep is only the wakes' backstop): its attempt count
 * unchanged, no queue message. Conditional on the delivery being as read (still pending at `attempts`, no lease
 * running).
 *
 * `true` once it is parked (already parked with an outbox key still {@link PARK_MARGIN_MS} ahead: no write), `false`
 * when an attempt is running on it (its consumer schedules what follows) or it moved since it was read.
 */
export async function parkDelivery(
  delivery: Pick<WebhookDelivery, 'id' | 'endpointId' | 'createdAt' | 'attempts' | 'leaseUntil' | 'relayAfter' | 'parked'>,
  at: { now: number; relayAfter: number },
): Promise<boolean> {
  if ((delivery.leaseUntil ?? 0) > at.now) return false;
  if (delivery.parked === true && delivery.relayAfter !== undefined && delivery.relayAfter >= at.now + PARK_MARGIN_MS) return true;
  const outbox = outboxAfter(delivery.id, at.relayAfter);
  const parked = keys.parkedIndex(delivery.endpointId, delivery.id, delivery.createdAt);
  return writeIfCondition(
    documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.webhookDelivery(delivery.id),
        UpdateExpression: 'SET updatedAt = :updatedAt, gsi2pk = :outboxPk, gsi2sk = :outboxSk, gsi4pk = :parkedPk, gsi4sk = :parkedSk',
        ConditionExpression: `${pendingCondition} AND ${leaseFree}`,
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':pending': 'pending',
          ':attempts': delivery.attempts,
          ':now': at.now,
          ':updatedAt': new Date(at.now).toISOString(),
          ':outboxPk': outbox.gsi2pk,
          ':outboxSk': outbox.gsi2sk,
          ':parkedPk': parked.gsi4pk,
          ':parkedSk': parked.gsi4sk,
        },
      }),
    ),
  );
}

/**
 * Up to `limit` deliveries parked on an endpoint, longest-waiting first, with when each was created (the index:
 * eventually consistent).
 */
export async function parkedDeliveries(endpointId: string, limit: number): Promise<Array<{ deliveryId: string; createdAt: string }>> {
  const shards = await Promise.all(
    Array.from({ length: PARKED_SHARDS }, async (_, shard) => {
      const { Items } = await documentClient.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: 'gsi4',
          KeyConditionExpression: 'gsi4pk = :parked',
          ExpressionAttributeValues: { ':parked': keys.parkedPartition(endpointId, shard) },
          Limit: limit,
        }),
      );
      return (Items ?? []).map((item) => item.gsi4sk as string);
    }),
  );
  return shards.flat().sort().slice(0, limit).map(keys.parkedEntry);
}

/**
 * Takes a delivery out of its endpoint's parked index, if it is still there and pending: `true` for the one caller
 * that did (it then sends the delivery's message), so two consumers waking the same endpoint wake a delivery once.
 * Its outbox key stays ahead: a wake message lost on the way is made good by the sweep.
 */
export function unparkDelivery(deliveryId: string, endpointId: string): Promise<boolean> {
  return writeIfCondition(
    documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.webhookDelivery(deliveryId),
        UpdateExpression: 'REMOVE gsi4pk, gsi4sk',
        ConditionExpression: '#status = :pending AND begins_with(gsi4pk, :parked)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':pending': 'pending', ':parked': keys.parkedPrefix(endpointId) },
      }),
    ),
  );
}

/**
 * Records the outcome of the attempt that brought the delivery to `attempts`, with its audit event, in one
 * TransactWriteItems: conditional on the delivery being still pending at that very attempt (a consumer whose
 * lease ran out and was overtaken records nothing). Finished (succeeded or failed), the delivery leaves the
 * outbox; still pending, its outbox sort key moves past the next attempt's due time. `withoutLease`: the
 * delivery was not claimed (an endpoint found deleted, an interrupted last attempt), so the condition is
 * instead that no attempt is running. `false` when the condition does not hold.
 */
export async function recordAttempt(
  delivery: Pick<WebhookDelivery, 'id' | 'attempts'>,
  record: AttemptRecord,
  audit: AuditEvent,
  at: { now: number; withoutLease?: boolean },
): Promise<boolean> {
  const values: Record<string, unknown> = {
    ':pending': 'pending',
    ':attempts': delivery.attempts,
    ':status': record.status,
    ':httpStatus': record.httpStatus,
    ':error': record.status === 'succeeded' ? null : record.error,
    ':updatedAt': new Date(at.now).toISOString(),
  };
  const set = ['#status = :status', 'lastHttpStatus = :httpStatus', 'lastError = :error', 'updatedAt = :updatedAt'];
  const remove = ['leaseUntil'];
  if (record.status === 'pending') {
    const outbox = outboxAfter(delivery.id, record.nextAttemptAt);
    set.push('nextAttemptAt = :nextAttemptAt', 'gsi2pk = :outboxPk', 'gsi2sk = :outboxSk');
    Object.assign(values, { ':nextAttemptAt': record.nextAttemptAt, ':outboxPk': outbox.gsi2pk, ':outboxSk': outbox.gsi2sk });
  } else {
    remove.push('nextAttemptAt', 'gsi2pk', 'gsi2sk', 'gsi4pk', 'gsi4sk');
  }
  if (at.withoutLease === true) values[':now'] = at.now;
  const update = {
    Update: {
      TableName: tableName,
      Key: keys.webhookDelivery(delivery.id),
      UpdateExpression: `SET ${set.join(', ')} REMOVE ${remove.join(', ')}`,
      ConditionExpression: at.withoutLease === true ? `${pendingCondition} AND ${leaseFree}` : pendingCondition,
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: values,
    },
  };
  try {
    await transactWrite([update, putAuditEvent(audit)]);
    return true;
  } catch (error) {
    if (failedConditions(error).includes(0)) return false;
    throw error;
  }
}

/**
 * Writes a resent delivery (new id, same event) with its audit event, in one transaction conditional on its
 * endpoint still existing (409 WEBHOOK_ENDPOINT_DELETED otherwise). Being new and pending, it enters the
 * outbox, and the relay enqueues it like any other.
 */
export async function putResentDelivery(delivery: WebhookDelivery, audit: AuditEvent): Promise<void> {
  try {
    await transactWrite([
      putNewDelivery(delivery),
      putAuditEvent(audit),
      {
        ConditionCheck: {
          TableName: tableName,
          Key: keys.webhookEndpoint(delivery.partnerId, delivery.endpointId),
          ConditionExpression: 'attribute_exists(pk)',
        },
      },
    ]);
  } catch (error) {
    if (failedConditions(error).includes(2)) throw errors.webhookEndpointDeleted();
    throw error;
  }
}
