/** Transactions and their payment-intent links. */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { errors } from '../domain/errors';
import { legacyFacts, type ReversalFacts } from '../domain/ledger';
import { currencyCode } from '../domain/money';
import { type ReconciliationState, startWatch, watchOf } from '../domain/reconciliation';
import { clientPaymentRefusal, partnerPaymentRefusal, type Transaction, type TransactionFilters, type TransactionStatus } from '../domain/transaction';
import { toClient } from './clients';
import { cancelledItem, failedConditions } from './conditions';
import type { FoldedCompletion } from '../domain/idempotency';
import { IntentAlreadyLinked, TransactionExists, TransactionStateConflict } from '../use-cases/ports/transaction-store';
import { completionItem } from './idempotency';
import { documentClient, tableName } from './dynamo';
import { keys, TRANSACTION_LIST_SHARDS } from './keys';
import { batchGetAll } from './batch-get';
import { lineSettlementStatus, type StoredBatchStatus } from '../domain/settlement';
import { type ListSource, type Page, queryPage, queryShardedPage, shardedSources } from './paging';
import { toPartner } from './partners';
import { transactWrite } from './transact';

export const toTransaction = (item: Record<string, unknown>): Transaction => ({
  id: item.id as string,
  svcTxId: item.svcTxId as string,
  partnerId: item.partnerId as string,
  partnerName: item.partnerName as string,
  clientId: item.clientId as string,
  clientName: item.clientName as string,
  partnerReference: item.partnerReference as string,
  processorPaymentIntentId: (item.processorPaymentIntentId as string | null | undefined) ?? null,
  amountMinor: item.amountMinor as number,
  currency: currencyCode(item.currency as string),
  status: item.status as TransactionStatus,
  settlementStatus: item.settlementStatus as Transaction['settlementStatus'],
  ...(typeof item.batchId === 'string' ? { batchId: item.batchId } : {}),
  fees: (item.fees as Transaction['fees'] | undefined) ?? null,
  // An item written before the ledger has no facts: what its status says was reversed, whole.
  reversals: (item.reversals as ReversalFacts | undefined) ?? legacyFacts(item.status as TransactionStatus, item.amountMinor as number),
  revision: (item.revision as number | undefined) ?? 0,
  receiptEmail: (item.receiptEmail as string | null | undefined) ?? null,
  statementDescriptorSuffix: (item.statementDescriptorSuffix as string | null | undefined) ?? null,
  meta: typeof item.metaJson === 'string' ? (JSON.parse(item.metaJson) as Record<string, unknown>) : null,
  createdAt: item.createdAt as string,
  updatedAt: item.updatedAt as string,
  ...(item.reconciliation === undefined ? {} : { reconciliation: item.reconciliation as ReconciliationState }),
});

/**
 * `meta` is stored as its JSON text: it comes back exactly as given, and no caller value (deep nesting, numbers
 * outside DynamoDB's range, empty keys) can make the write fail. A transaction the reconciliation watches (a
 * checkout's, pending with its intent) is in the sparse reconciliation index from its first write, its first look
 * due 10 minutes on.
 */
export const transactionItem = ({ meta, ...tx }: Transaction) => ({
  ...keys.transaction(tx.svcTxId),
  ...keys.transactionIndex(tx.partnerId, tx.svcTxId, tx.createdAt),
  entity: 'transaction',
  ...tx,
  ...watchItem(tx),
  metaJson: meta === null ? null : JSON.stringify(meta),
});

/** The index keys and state of a watch starting at the transaction's last change, if it is watched. */
function watchItem(tx: Omit<Transaction, 'meta'>) {
  if (watchOf(tx) === undefined) return {};
  const watch = startWatch(tx.updatedAt);
  return { ...keys.reconciliationIndex(tx.svcTxId, watch.dueAt), reconciliation: tx.reconciliation ?? watch.state };
}

const intentLink = (paymentIntentId: string, svcTxId: string) => ({
  Put: {
    TableName: tableName,
    Item: { ...keys.paymentIntent(paymentIntentId), entity: 'paymentIntentLink', paymentIntentId, svcTxId },
    ConditionExpression: 'attribute_not_exists(pk)',
  },
});

/**
 * The payment gate, re-checked inside the write (decisions.md §5): the partner still active with KYC approved,
 * the client still active. Closes the window between the use case's checks and the write. A failed check returns
 * the item as it then was, so the refusal names what changed (`paymentWriteRefusal`).
 */
const payeeStillActive = (partnerId: string, clientId: string) => [
  {
    ConditionCheck: {
      TableName: tableName,
      Key: keys.partner(partnerId),
      ConditionExpression: '#status = :active AND kycStatus = :approved',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':active': 'active', ':approved': 'approved' },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  },
  {
    ConditionCheck: {
      TableName: tableName,
      Key: keys.client(partnerId, clientId),
      ConditionExpression: '#status = :active',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':active': 'active' },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  },
];

/**
 * Maps a refused payment write (the transaction item first, then the link of `linkedIntent` when there is one,
 * then `payeeStillActive`) to its error: `onTransaction` for the transaction's own condition, else
 * {@link IntentAlreadyLinked} (how a caller is told is the use case's choice: the store knows no request field),
 * else the payment gate's code for the partner or client as the write found it (gone, suspended, KYC no longer
 * approved); anything else is rethrown as it is.
 */
function paymentWriteRefusal(error: unknown, items: readonly object[], linkedIntent: string | null, onTransaction: () => Error): Error {
  const failed = failedConditions(error);
  if (failed.includes(0)) return onTransaction();
  if (linkedIntent !== null && failed.includes(1)) return new IntentAlreadyLinked(`Payment intent ${linkedIntent} is linked to another transaction`);
  const partnerAt = items.length - 2;
  const clientAt = items.length - 1;
  if (failed.includes(partnerAt)) return partnerPaymentRefusal(asFound(error, partnerAt, toPartner)) ?? errors.partnerNotActive();
  if (failed.includes(clientAt)) return clientPaymentRefusal(asFound(error, clientAt, toClient)) ?? errors.clientNotActive();
  return error as Error;
}

const asFound = <T>(error: unknown, index: number, read: (item: Record<string, unknown>) => T): T | undefined => {
  const item = cancelledItem(error, index);
  return item === undefined ? undefined : read(item);
};

/**
 * Writes a new transaction, and, when it has one, the link from its payment intent, in one transaction:
 * both conditional on not existing (an intent can never belong to two transactions), and on the payee still
 * passing the payment gate. With `completion`, the request's idempotency key is completed in the same write
 * (`completion.committed` once it is); a key whose lease another request has taken meanwhile refuses it all:
 * 409 IDEMPOTENCY_KEY_IN_USE, nothing written.
 */
export async function createTransaction(tx: Transaction, completion?: FoldedCompletion): Promise<Transaction> {
  const items: object[] = [{ Put: { TableName: tableName, Item: transactionItem(tx), ConditionExpression: 'attribute_not_exists(pk)' } }];
  if (tx.processorPaymentIntentId !== null) items.push(intentLink(tx.processorPaymentIntentId, tx.svcTxId));
  items.push(...payeeStillActive(tx.partnerId, tx.clientId));
  const written = items.length;
  if (completion !== undefined) items.push(completionItem(completion));
  try {
    await transactWrite(items as never);
  } catch (error) {
    const failed = failedConditions(error);
    if (!failed.includes(0) && failed.includes(written)) throw errors.idempotencyKeyInUse(1);
    throw paymentWriteRefusal(error, items.slice(0, written), tx.processorPaymentIntentId, () => new TransactionExists(tx.svcTxId));
  }
  if (completion !== undefined) completion.committed = true;
  return tx;
}

/**
 * The transactions with the settlement status their batches give them (docs/settlement.md: a line's status follows
 * its batch, so all of a batch's lines turn `queued` at its commit and `paid` at its payout, at once): one read of
 * the batches' records for the lot.
 */
export async function withSettlementStatus(transactions: Transaction[]): Promise<Transaction[]> {
  const batchIds = [...new Set(transactions.flatMap((tx) => (tx.batchId === undefined ? [] : [tx.batchId])))];
  if (batchIds.length === 0) return transactions;
  const records = await batchGetAll(batchIds.map(keys.settlementBatch), 'id, #status', { '#status': 'status' });
  const statusOf = new Map(records.map((record) => [record.id as string, record.status as StoredBatchStatus]));
  return transactions.map((tx) => (tx.batchId === undefined ? tx : { ...tx, settlementStatus: lineSettlementStatus(statusOf.get(tx.batchId)) }));
}

export async function getTransaction(svcTxId: string): Promise<Transaction | undefined> {
  const { Item } = await documentClient.send(
    new GetCommand({ TableName: tableName, Key: keys.transaction(svcTxId), ConsistentRead: true }),
  );
  return Item === undefined ? undefined : toTransaction(Item);
}

/** The transaction a processor payment intent is linked to (the intent link, then the transaction). */
export async function getTransactionByPaymentIntent(paymentIntentId: string): Promise<Transaction | undefined> {
  const { Item } = await documentClient.send(
    new GetCommand({ TableName: tableName, Key: keys.paymentIntent(paymentIntentId), ConsistentRead: true }),
  );
  return typeof Item?.svcTxId === 'string' ? getTransaction(Item.svcTxId) : undefined;
}

/**
 * initialized -> pending with the intent linked: one transaction, conditional on the transaction still being
 * `initialized`, the intent not yet linked anywhere, and the payee still passing the payment gate. The transaction
 * now waits for the processor: it enters the sparse reconciliation index in the same write, its first look due
 * 10 minutes on.
 */
export async function attachPaymentIntent(
  tx: Pick<Transaction, 'svcTxId' | 'partnerId' | 'clientId'>,
  paymentIntentId: string,
  now: string,
): Promise<void> {
  const watch = startWatch(now);
  const index = keys.reconciliationIndex(tx.svcTxId, watch.dueAt);
  const items = [
    {
      Update: {
        TableName: tableName,
        Key: keys.transaction(tx.svcTxId),
        UpdateExpression: 'SET #status = :pending, processorPaymentIntentId = :intent, updatedAt = :now, gsi4pk = :gsi4pk, gsi4sk = :gsi4sk, reconciliation = :watch',
        ConditionExpression: 'attribute_exists(pk) AND #status = :initialized',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':pending': 'pending',
          ':initialized': 'initialized',
          ':intent': paymentIntentId,
          ':now': now,
          ':gsi4pk': index.gsi4pk,
          ':gsi4sk': index.gsi4sk,
          ':watch': watch.state,
        },
      },
    },
    intentLink(paymentIntentId, tx.svcTxId),
    ...payeeStillActive(tx.partnerId, tx.clientId),
  ];
  try {
    await transactWrite(items as never);
  } catch (error) {
    throw paymentWriteRefusal(error, items, paymentIntentId, () => new TransactionStateConflict(tx.svcTxId));
  }
}

export type { TransactionFilters };

/** The key range of a transaction's own item alone: its sort key `TX` (its adjustments, in its partition, sort as `ADJUSTMENT#…`). */
function ownItem(svcTxId: string) {
  const { pk, sk } = keys.transaction(svcTxId);
  return { partition: pk, sortFrom: sk, sortTo: sk };
}

/**
 * One partner's transactions, or (no partner) every partner's; newest first, filtered, paged. With `svcTxId`, a
 * Query of that transaction's own item (at most one), the partner and the creation range then filters like
 * the others.
 */
export function listTransactions(
  partnerId: string | undefined,
  filters: TransactionFilters,
  page: { limit: number; cursor?: string | undefined },
): Promise<Page<Transaction>> {
  const conditions: string[] = [];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const add = (attribute: string, value: string | undefined, operator = '=', name = attribute) => {
    if (value === undefined) return;
    names[`#${attribute}`] = attribute;
    values[`:${name}`] = value;
    conditions.push(`#${attribute} ${operator} :${name}`);
  };
  add('status', filters.status);
  add('clientId', filters.clientId);
  add('partnerReference', filters.partnerReference);
  if (filters.svcTxId !== undefined) {
    add('partnerId', partnerId);
    add('createdAt', filters.createdFrom, '>=', 'createdFrom');
    add('createdAt', filters.createdTo, '<=', 'createdTo');
  }
  const filter = conditions.length === 0 ? undefined : { expression: conditions.join(' AND '), names, values };
  if (filters.svcTxId !== undefined) return queryPage({ ...ownItem(filters.svcTxId), filter, ...page, toItem: toTransaction });
  return queryShardedPage({
    list: partnerId === undefined ? 'transactions' : `transactions/${partnerId}`,
    sources: transactionListSources(partnerId),
    sortFrom: filters.createdFrom,
    sortTo: filters.createdTo,
    filter,
    ...page,
    toItem: toTransaction,
  });
}

/**
 * Where a partner's transactions (or, without a partner, every partner's) are listed: each shard of the list index,
 * and the partition that held them before the shards (`npm run backfill:transaction-lists` empties it; until then,
 * and harmlessly after, it is read too).
 */
function transactionListSources(partnerId: string | undefined): ListSource[] {
  return partnerId === undefined
    ? shardedSources('gsi6', TRANSACTION_LIST_SHARDS.platform, keys.platformTransactionShard, { index: 'gsi2', partition: keys.allTransactions })
    : shardedSources('gsi5', TRANSACTION_LIST_SHARDS.partner, (shard) => keys.partnerTransactionShard(partnerId, shard), { index: 'gsi1', partition: keys.transactionsOf(partnerId) });
}
