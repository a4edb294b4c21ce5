/**
 * Partner webhook deliveries (decisions.md §2, §8): one item per (partner event, endpoint), listed per partner
 * (gsi1), and in the outbox (gsi7 `OUTBOX#<shard>`, sparse, keys only) while pending: see `keys.outboxIndex`. A
 * delivery written before the outbox had shards holds its entry in gsi2 `OUTBOX` instead; every write that moves or
 * removes an entry moves it out of there.
 */
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AuditEvent } from '../domain/audit';
import { errors } from '../domain/errors';
import { ATTEMPT_LEASE_MS, type AttemptRecord, type DeliveryStatus, type PartnerEvent, type WebhookDelivery } from '../domain/webhooks';
import { putAuditEvent } from './audit-events';
import { failedConditions, writeIfCondition } from './conditions';
import { documentClient, tableName } from './dynamo';
import { DELIVERY_LIST_SHARDS, keys, PARKED_SHARDS } from './keys';
import { transactWrite } from './transact';
import { type Page, queryShardedPage, shardedSources, statusFilter } from './paging';

/** How far past the time in force (a lease's end, a backoff's due time) a pending delivery's outbox key lies. */
export const OUTBOX_GRACE_MS = 30_000;

/**
 * How long after its creation a pending delivery that no message has picked up is relayed again: the grace in which
 * the stream relay and the consumer take it first, then its first attempt's lease and the grace again. So the claim
 * of an attempt made within that first grace finds the key past its lease already and leaves it (see
 * {@link claimAttempt}): a delivery that succeeds at once writes its outbox entry twice, set and removed.
 */
export const FIRST_RELAY_MS = OUTBOX_GRACE_MS + ATTEMPT_LEASE_MS + OUTBOX_GRACE_MS;

/**
 * How far beyond a grace past the lease's end a claim leaves the outbox key (a sweep's lease puts it 5 minutes
 * ahead): further out (a parked delivery's, a day away), the claim brings it back, so an attempt cut short is still
 * relayed within minutes.
 */
const CLAIM_KEEPS_KEY_WITHIN_MS = 5 * 60_000;

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
  relayAfter: relayAfterOf(item),
  parked: typeof item.gsi4pk === 'string',
  createdAt: item.createdAt as string,
  updatedAt: item.updatedAt as string,
});

/** Epoch ms: the relay time of the delivery's outbox entry, in the sharded outbox or (written before it) the legacy one. */
function relayAfterOf(item: Record<string, unknown>): number | undefined {
  const sortKey = typeof item.gsi7sk === 'string' ? item.gsi7sk : item.gsi2pk === keys.legacyOutbox ? item.gsi2sk : undefined;
  return typeof sortKey === 'string' ? Date.parse(keys.outboxEntry(sortKey).relayAfter) : undefined;
}

const outboxKeys = (deliveryId: string, relayAfter: number) => keys.outboxIndex(deliveryId, new Date(relayAfter).toISOString());

/**
 * The parts of an update that put the delivery's outbox entry at `relayAfter` (epoch ms): in its shard, and out of
 * the legacy partition where a delivery written before the shards has it.
 */
export const outboxMove = (deliveryId: string, relayAfter: number) => {
  const { gsi7pk, gsi7sk } = outboxKeys(deliveryId, relayAfter);
  return { set: 'gsi7pk = :outboxPk, gsi7sk = :outboxSk', remove: 'gsi2pk, gsi2sk', values: { ':outboxPk': gsi7pk, ':outboxSk': gsi7sk } };
};

/** What a finished delivery removes: its outbox entry, wherever it is, and its parked entry. */
const INDEX_ENTRIES_OF_PENDING = 'gsi7pk, gsi7sk, gsi2pk, gsi2sk, gsi4pk, gsi4sk';

/** A new delivery's item: listed under its partner, and in the outbox until it is finished. */
export const deliveryItem = (delivery: WebhookDelivery) => ({
  ...keys.webhookDelivery(delivery.id),
  ...keys.webhookDeliveryIndex(delivery.partnerId, delivery.svcTxId, delivery.id, delivery.createdAt),
  ...(delivery.status === 'pending' ? outboxKeys(delivery.id, Date.parse(delivery.createdAt) + FIRST_RELAY_MS) : {}),
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
 * While the delivery is pending its outbox sort key is kept at least {@link OUTBOX_GRACE_MS} after whichever of the
 * two is in force (a few minutes at most beyond that, but while parked), so the relay's sweep re-sends a message
 * only once the one that should have come is overdue.
 */

const pendingCondition = '#status = :pending AND attempts = :attempts';
const leaseFree = '(attribute_not_exists(leaseUntil) OR leaseUntil <= :now)';

/**
 * Claims attempt `attempts + 1` of a pending delivery: one conditional update that holds only if no attempt
 * was claimed since `attempts` was read, no lease is running, and the backoff has passed (`dueBy`: now plus
 * a small tolerance for a queue's clock). `false` when any of that does not hold (another consumer has it,
 * or the message came early): the caller acknowledges and does nothing.
 *
 * The outbox key moves past the lease only when it must: when it lies short of a grace past the lease's end (the
 * sweep could find the delivery due while the attempt runs), or far beyond it (a parked delivery's: an attempt cut
 * short would wait a day). A claim soon after the delivery's creation, or after a sweep's message, writes no index.
 */
export async function claimAttempt(
  delivery: Pick<WebhookDelivery, 'id' | 'attempts' | 'relayAfter'>,
  at: { now: number; dueBy: number; leaseUntil: number },
): Promise<boolean> {
  // Leaving the key as read is safe: the read is strongly consistent, and the claim is conditional on the key being
  // still as read (a park that moved it a day ahead meanwhile would otherwise leave a crashed attempt's delivery
  // waiting a day); an attempt's record changes `attempts` (this claim fails too). A sweep that gives its lease back
  // may set the key due while the attempt runs: the sweep then sends a message that is a duplicate, and harmless, as
  // this very condition (attempts, lease) stops a second attempt.
  const keep = delivery.relayAfter !== undefined && isOutboxKeyPast(delivery.relayAfter, at.leaseUntil);
  const move = keep ? undefined : outboxMove(delivery.id, at.leaseUntil + OUTBOX_GRACE_MS);
  const keptKey = keep ? `${new Date(delivery.relayAfter!).toISOString()}#${delivery.id}` : undefined;
  return writeIfCondition(
    documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.webhookDelivery(delivery.id),
        UpdateExpression: move === undefined
          ? 'SET attempts = attempts + :one, leaseUntil = :leaseUntil, updatedAt = :updatedAt REMOVE gsi4pk, gsi4sk'
          : `SET attempts = attempts + :one, leaseUntil = :leaseUntil, updatedAt = :updatedAt, ${move.set} REMOVE gsi4pk, gsi4sk, ${move.remove}`,
        ConditionExpression:
          `${pendingCondition} AND ${leaseFree} AND (attribute_not_exists(nextAttemptAt) OR nextAttemptAt <= :dueBy)` +
          (keptKey === undefined ? '' : ' AND (gsi7sk = :keptKey OR gsi2sk = :keptKey)'),
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':pending': 'pending',
          ':attempts': delivery.attempts,
          ':now': at.now,
          ':dueBy': at.dueBy,
          ':one': 1,
          ':leaseUntil': at.leaseUntil,
          ':updatedAt': new Date(at.now).toISOString(),
          ...(keptKey === undefined ? {} : { ':keptKey': keptKey }),
          ...move?.values,
        },
      }),
    ),
  );
}

/** Whether an outbox key at `relayAfter` may stay for a lease until `leaseUntil` (epoch ms): a grace past it, and not far beyond. */
const isOutboxKeyPast = (relayAfter: number, leaseUntil: number) =>
  relayAfter >= leaseUntil + OUTBOX_GRACE_MS && relayAfter <= leaseUntil + OUTBOX_GRACE_MS + CLAIM_KEEPS_KEY_WITHIN_MS;

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
  const outbox = outboxMove(delivery.id, at.relayAfter + OUTBOX_GRACE_MS);
  const parked = keys.parkedIndex(delivery.endpointId, delivery.id, delivery.createdAt);
  return writeIfCondition(
    documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.webhookDelivery(delivery.id),
        UpdateExpression: `SET updatedAt = :updatedAt, ${outbox.set}, gsi4pk = :parkedPk, gsi4sk = :parkedSk REMOVE ${outbox.remove}`,
        ConditionExpression: `${pendingCondition} AND ${leaseFree}`,
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':pending': 'pending',
          ':attempts': delivery.attempts,
          ':now': at.now,
          ':updatedAt': new Date(at.now).toISOString(),
          ...outbox.values,
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
    const outbox = outboxMove(delivery.id, record.nextAttemptAt + OUTBOX_GRACE_MS);
    set.push('nextAttemptAt = :nextAttemptAt', outbox.set);
    remove.push(outbox.remove);
    Object.assign(values, { ':nextAttemptAt': record.nextAttemptAt, ...outbox.values });
  } else {
    remove.push('nextAttemptAt', INDEX_ENTRIES_OF_PENDING);
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
