/**
 * A transaction moved by a processor event (decisions.md §5), written as ONE TransactWriteItems, so the move,
 * its fee fields, its settlement bookkeeping, the record that the event was applied and the partner's
 * notifications happen together or not at all:
 *
 *   0. the processed-event record `PROCESSOR_EVENT#<event id>` (`attribute_not_exists`; TTL
 *      {@link PROCESSED_EVENT_TTL_SECONDS}): a second delivery of the same event fails here;
 *   1. the transaction: the new status, `updatedAt`, the fee fields (a move to succeeded) and the settlement
 *      index set (succeeded) or removed (refunded/charged back before settlement), conditional on the status
 *      and `settlementStatus` it was read with, so a concurrent move or settlement run makes this write fail
 *      rather than be overwritten;
 *   2. the settlement adjustment (`ADJUSTMENT#refund|chargeback`), when a batch already took the transaction;
 *   3. one new delivery per subscribed endpoint: the outbox, which the relay hands to the delivery queue.
 */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { FeeBreakdown, SettlementAdjustment, SettlementEffect, Transaction, TransactionStatus } from '../domain/transaction';
import type { WebhookDelivery } from '../domain/webhooks';
import { putNewDelivery } from './deliveries';
import { documentClient, tableName } from './dynamo';
import { keys } from './keys';

/**
 * How long a processed event id is remembered: longer than the processor retries an event (Stripe: up to 3
 * days in live mode) and than anyone would resend one by hand from its dashboard (Stripe keeps events 30 days).
 */
const PROCESSED_EVENT_TTL_SECONDS = 30 * 24 * 60 * 60;

/** DynamoDB's limit on the items of one TransactWriteItems. */
const MAX_TRANSACT_ITEMS = 100;

/**
 * The most deliveries one move can create: DynamoDB's 100 items less the event record, the transaction and an
 * adjustment. Partners may have at most 20 webhook endpoints (the admin API refuses more), far below this.
 */
export const MAX_DELIVERIES_PER_MOVE = MAX_TRANSACT_ITEMS - 3;

export interface TransactionMove {
  /** The processor's event and its type, recorded as applied. */
  eventId: string;
  eventType: string;
  /** The transaction as read: the write expects its `status` and `settlementStatus` unchanged. */
  transaction: Transaction;
  to: TransactionStatus;
  /** Set on a move to succeeded, else `null` (the fields stay as they are). */
  fees: FeeBreakdown | null;
  settlement: SettlementEffect;
  /** The partner event announcing the move, shared by all its deliveries. */
  partnerEventId: string;
  deliveries: readonly WebhookDelivery[];
  now: string;
}

/**
 * `applied`; `duplicate`: the event was applied before (nothing written); `conflict`: the transaction changed
 * since it was read, or another write held it (nothing written; read it again and decide again).
 */
export type MoveOutcome = 'applied' | 'duplicate' | 'conflict';

export class TooManyDeliveries extends Error {
  override readonly name = 'TooManyDeliveries';
}

export async function applyTransactionMove(move: TransactionMove): Promise<MoveOutcome> {
  if (move.deliveries.length > MAX_DELIVERIES_PER_MOVE) {
    throw new TooManyDeliveries(
      `transaction ${move.transaction.svcTxId}: ${move.deliveries.length} subscribed endpoints, but one move can notify at most ${MAX_DELIVERIES_PER_MOVE}`,
    );
  }
  const items: object[] = [processedEventPut(move), transactionUpdate(move)];
  if (move.settlement.kind === 'adjust') items.push(adjustmentPut(move.settlement.adjustment));
  items.push(...move.deliveries.map(putNewDelivery));
  try {
    await documentClient.send(new TransactWriteCommand({ TransactItems: items as never }));
    return 'applied';
  } catch (error) {
    if (!(error instanceof TransactionCanceledException)) throw error;
    const reasons = error.CancellationReasons ?? [];
    if (reasons[0]?.Code === 'ConditionalCheckFailed') return 'duplicate';
    if (reasons.some((reason) => reason.Code === 'ConditionalCheckFailed' || reason.Code === 'TransactionConflict')) return 'conflict';
    throw error;
  }
}

const processedEventPut = (move: TransactionMove) => ({
  Put: {
    TableName: tableName,
    Item: {
      ...keys.processorEvent(move.eventId),
      entity: 'processorEvent',
      eventId: move.eventId,
      eventType: move.eventType,
      svcTxId: move.transaction.svcTxId,
      fromStatus: move.transaction.status,
      toStatus: move.to,
      partnerEventId: move.partnerEventId,
      processedAt: move.now,
      expiresAt: Math.floor(Date.parse(move.now) / 1000) + PROCESSED_EVENT_TTL_SECONDS,
    },
    ConditionExpression: 'attribute_not_exists(pk)',
  },
});

function transactionUpdate(move: TransactionMove) {
  const { transaction, settlement } = move;
  const set = ['#status = :to', 'updatedAt = :now'];
  const remove: string[] = [];
  const values: Record<string, unknown> = {
    ':to': move.to,
    ':now': move.now,
    ':from': transaction.status,
    ':settlement': transaction.settlementStatus,
  };
  if (move.fees !== null) {
    set.push('fees = :fees');
    values[':fees'] = move.fees;
  }
  if (settlement.kind === 'index') {
    const index = keys.settlementIndex(transaction.partnerId, transaction.clientId, transaction.currency, transaction.createdAt, transaction.svcTxId);
    set.push('gsi3pk = :gsi3pk', 'gsi3sk = :gsi3sk');
    values[':gsi3pk'] = index.gsi3pk;
    values[':gsi3sk'] = index.gsi3sk;
  }
  if (settlement.kind === 'unindex') remove.push('gsi3pk', 'gsi3sk');
  return {
    Update: {
      TableName: tableName,
      Key: keys.transaction(transaction.svcTxId),
      UpdateExpression: `SET ${set.join(', ')}${remove.length === 0 ? '' : ` REMOVE ${remove.join(', ')}`}`,
      ConditionExpression: 'attribute_exists(pk) AND #status = :from AND settlementStatus = :settlement',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: values,
    },
  };
}

/** The adjustment waits in the settlement index (as a transaction does) until a batch deducts it. */
const adjustmentPut = (adjustment: SettlementAdjustment) => ({
  Put: {
    TableName: tableName,
    Item: {
      ...keys.adjustment(adjustment.svcTxId, adjustment.kind),
      ...keys.settlementIndex(adjustment.partnerId, adjustment.clientId, adjustment.currency, adjustment.createdAt, `${adjustment.svcTxId}#${adjustment.kind}`),
      entity: 'settlementAdjustment',
      ...adjustment,
      settlementStatus: 'unsettled',
    },
    ConditionExpression: 'attribute_not_exists(pk)',
  },
});
