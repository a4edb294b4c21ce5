/**
 * A payment changed by a processor event (decisions.md §5, §5a), written as ONE TransactWriteItems, so the status
 * move, its split, the reversal facts, the ledger entries, the record that the event was applied and the
 * partner's notifications happen together or not at all:
 *
 *   0. the processed-event record `PROCESSOR_EVENT#<event id>` (`attribute_not_exists`; TTL
 *      {@link PROCESSED_EVENT_TTL_SECONDS}): a second delivery of the same event fails here;
 *   1. the transaction: status, facts, `revision + 1`, `updatedAt`, and on success the split and the settlement
 *      index (its sale now waits); on a status move, the reconciliation's watch: started afresh (its keys due
 *      10 minutes on) when the new status is still watched (`failed`: a retry may still succeed), removed when not;
 *      conditional on the status and revision it was read with, so two events never both apply to one reading (the
 *      loser reads again and decides again);
 *   2. each new ledger entry, `attribute_not_exists`, waiting in the settlement index;
 *   3. one new delivery per subscribed endpoint and partner event: the outbox, which the relay hands to the queue.
 */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { LedgerEntry } from '../domain/ledger';
import { startWatch, watchOf } from '../domain/reconciliation';
import type { PaymentWrite, PaymentWriteOutcome } from '../use-cases/processor-events';
import { putNewDelivery } from './deliveries';
import { documentClient, tableName } from './dynamo';
import { entryItem } from './ledger-entries';
import { keys } from './keys';

/**
 * How long a processed event id is remembered: longer than the processor retries an event (Stripe: up to 3
 * days in live mode) and than anyone would resend one by hand from its dashboard (Stripe keeps events 30 days).
 */
const PROCESSED_EVENT_TTL_SECONDS = 30 * 24 * 60 * 60;

/** DynamoDB's limit on the items of one TransactWriteItems. */
const MAX_TRANSACT_ITEMS = 100;

export class TooManyItems extends Error {
  override readonly name = 'TooManyItems';
}

export async function writePaymentUpdate(write: PaymentWrite): Promise<PaymentWriteOutcome> {
  const items: object[] = [
    processedEventPut(write),
    transactionUpdate(write),
    ...write.update.entries.map(entryPut),
    ...write.deliveries.map(putNewDelivery),
  ];
  // Endpoints are at most 20 a partner and one write emits at most a few events: only a payment with dozens of
  // refunds recorded before its success could pass this, and then the processor retries a write that fails loudly.
  if (items.length > MAX_TRANSACT_ITEMS) {
    throw new TooManyItems(`transaction ${write.transaction.svcTxId}: one event's write needs ${items.length} items, more than ${MAX_TRANSACT_ITEMS}`);
  }
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

const processedEventPut = (write: PaymentWrite) => ({
  Put: {
    TableName: tableName,
    Item: {
      ...keys.processorEvent(write.eventId),
      entity: 'processorEvent',
      eventId: write.eventId,
      eventType: write.eventType,
      svcTxId: write.transaction.svcTxId,
      fromStatus: write.transaction.status,
      toStatus: write.update.status,
      partnerEventIds: write.partnerEventIds,
      processedAt: write.now,
      expiresAt: Math.floor(Date.parse(write.now) / 1000) + PROCESSED_EVENT_TTL_SECONDS,
    },
    ConditionExpression: 'attribute_not_exists(pk)',
  },
});

function transactionUpdate(write: PaymentWrite) {
  const { transaction, update } = write;
  const set = ['#status = :to', 'reversals = :reversals', 'revision = :next', 'updatedAt = :now'];
  const values: Record<string, unknown> = {
    ':to': update.status,
    ':reversals': update.reversals,
    ':next': transaction.revision + 1,
    ':now': write.now,
    ':from': transaction.status,
  };
  if (update.succeededNow) {
    const index = keys.settlementIndex(transaction.partnerId, transaction.clientId, transaction.currency, transaction.createdAt, transaction.svcTxId);
    set.push('fees = :fees', 'gsi3pk = :gsi3pk', 'gsi3sk = :gsi3sk');
    Object.assign(values, { ':fees': update.fees, ':gsi3pk': index.gsi3pk, ':gsi3sk': index.gsi3sk });
  }
  const remove: string[] = [];
  if (update.status !== transaction.status) {
    if (watchOf({ status: update.status, processorPaymentIntentId: transaction.processorPaymentIntentId }) === undefined) {
      remove.push('gsi4pk', 'gsi4sk', 'reconciliation');
    } else {
      const watch = startWatch(write.now);
      const index = keys.reconciliationIndex(transaction.svcTxId, watch.dueAt);
      set.push('gsi4pk = :gsi4pk', 'gsi4sk = :gsi4sk', 'reconciliation = :watch');
      Object.assign(values, { ':gsi4pk': index.gsi4pk, ':gsi4sk': index.gsi4sk, ':watch': watch.state });
    }
  }
  // An item written before revisions were kept has none: it is revision 0.
  const revision = transaction.revision === 0 ? '(attribute_not_exists(revision) OR revision = :revision)' : 'revision = :revision';
  values[':revision'] = transaction.revision;
  return {
    Update: {
      TableName: tableName,
      Key: keys.transaction(transaction.svcTxId),
      UpdateExpression: `SET ${set.join(', ')}${remove.length === 0 ? '' : ` REMOVE ${remove.join(', ')}`}`,
      ConditionExpression: `attribute_exists(pk) AND #status = :from AND ${revision}`,
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: values,
    },
  };
}

const entryPut = (entry: LedgerEntry) => ({
  Put: { TableName: tableName, Item: entryItem(entry), ConditionExpression: 'attribute_not_exists(pk)' },
});
