/**
 * Settlement batches, and the items waiting for one (docs/data-model.md: the sparse settlement index).
 *
 * Every write that moves money is one conditional transaction:
 * - a batch is created together with the flip of every line it takes out of the index (`unsettled -> queued`,
 *   each conditional on still being unsettled and in the index), so two concurrent runs can never put one
 *   transaction in two batches: the second run's transaction fails on the taken lines and names them;
 * - a payout is claimed by a conditional update (pending or failed, and no live claim), an admin's together with
 *   its audit event;
 * - a paid batch is recorded `sent` together with every line's `queued -> paid`, conditional on the claim.
 */
import { GetCommand, UpdateCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import type { AuditEvent } from '../domain/audit';
import { currencyCode } from '../domain/money';
import type { BatchFilters, BatchStatus, SettlementBatch, SettlementItem } from '../domain/settlement';
import type { BatchWrite, PayoutClaim, PayoutRecord } from '../use-cases/ports/settlement-store';
import { putAuditEvent } from './audit-events';
import { cancelledItem, failedConditions, failedItem, isConditionFailure, writeIfCondition } from './conditions';
import { documentClient, tableName } from './dynamo';
import { keys } from './keys';
import { entryTableKey, SALE_KEY } from './ledger-entries';
import { type Page, queryPage, statusFilter } from './paging';
import { isConflictOnly, transactWrite } from './transact';

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/**
 * A batch line as stored. Lines written before the ledger (`kind` transaction/adjustment, `reversal`) are read as
 * the entries they were: a transaction's sale, or a whole-payment refund or chargeback.
 */
function toLine(line: Record<string, unknown>): SettlementItem {
  if (line.type !== undefined) return { ...(line as unknown as SettlementItem), currency: currencyCode(line.currency as string) };
  const sale = line.kind === 'transaction';
  const reversal = (line.reversal as 'refund' | 'chargeback' | null | undefined) ?? 'refund';
  return {
    type: sale ? 'transaction' : reversal,
    key: sale ? SALE_KEY : `adjustment#${reversal}`,
    cause: line.svcTxId as string,
    svcTxId: line.svcTxId as string,
    partnerId: line.partnerId as string,
    clientId: line.clientId as string,
    partnerReference: line.partnerReference as string,
    currency: currencyCode(line.currency as string),
    txCreatedAt: line.createdAt as string,
    createdAt: line.createdAt as string,
    grossMinor: line.grossMinor as number,
    processorFeeMinor: line.processorFeeMinor as number,
    platformFeeMinor: line.platformFeeMinor as number,
    svcEarningMinor: 0,
    netMinor: line.netMinor as number,
    settlesTransaction: sale,
  };
}

const toBatch = (item: Record<string, unknown>): SettlementBatch => ({
  id: item.id as string,
  partnerId: item.partnerId as string,
  clientId: item.clientId as string,
  currency: currencyCode(item.currency as string),
  lines: (item.lines as Record<string, unknown>[]).map(toLine),
  totals: item.totals as SettlementBatch['totals'],
  status: item.status as BatchStatus,
  rail: item.rail as SettlementBatch['rail'],
  transferId: (item.transferId as string | null | undefined) ?? null,
  payoutClaim: (item.payoutClaim as SettlementBatch['payoutClaim'] | undefined) ?? null,
  payoutAttempts: (item.payoutAttempts as number | undefined) ?? 0,
  failureReason: (item.failureReason as string | null | undefined) ?? null,
  createdAt: item.createdAt as string,
  updatedAt: item.updatedAt as string,
});

/**
 * Writes a new batch and flips its lines `unsettled -> queued` (out of the index, `batchId` set) in one
 * transaction: at most 100 items, hence {@link MAX_ITEMS_PER_BATCH} lines. Each flip is conditional on the line
 * still waiting (and a transaction still `succeeded`: a refund that won the race keeps it out). `contended` is
 * DynamoDB's TransactionConflict cancelling the transaction past the quick retries.
 */
export async function createBatch(batch: SettlementBatch): Promise<BatchWrite> {
  const items: TransactItem[] = [
    {
      Put: {
        TableName: tableName,
        Item: {
          ...keys.settlementBatch(batch.id),
          ...keys.settlementBatchIndex(batch.partnerId, batch.id, batch.createdAt),
          entity: 'settlementBatch',
          ...batch,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    ...batch.lines.map((line): TransactItem => ({
      Update: {
        TableName: tableName,
        Key: entryTableKey(line),
        UpdateExpression: 'SET settlementStatus = :queued, batchId = :batchId, updatedAt = :now REMOVE gsi3pk, gsi3sk',
        // A sale is taken as read: a payment the batch pays (`transactionIds`) must still be `succeeded`, and one
        // reversed meanwhile is settled beside its reversals instead (plan again).
        // And on its revision as read: a refund or dispute since the read (which the run did not see) makes the run
        // plan again, rather than pay the sale without the reversal.
        ConditionExpression:
          line.key === SALE_KEY
            ? `settlementStatus = :unsettled AND attribute_exists(gsi3pk) AND #status ${line.settlesTransaction ? '=' : '<>'} :succeeded AND ${
                (line.revision ?? 0) === 0 ? '(attribute_not_exists(revision) OR revision = :revision)' : 'revision = :revision'
              }`
            : 'settlementStatus = :unsettled AND attribute_exists(gsi3pk)',
        ...(line.key === SALE_KEY ? { ExpressionAttributeNames: { '#status': 'status' } } : {}),
        ExpressionAttributeValues: {
          ':queued': 'queued',
          ':unsettled': 'unsettled',
          ':batchId': batch.id,
          ':now': batch.createdAt,
          ...(line.key === SALE_KEY ? { ':succeeded': 'succeeded', ':revision': line.revision ?? 0 } : {}),
        },
      },
    })),
  ];
  try {
    await transactWrite(items);
    return { outcome: 'created' };
  } catch (error) {
    if (isConflictOnly(error)) return { outcome: 'contended' };
    const failed = failedConditions(error);
    // Item 0 is the batch itself (a fresh UUID: never taken); the lines follow it.
    const taken = failed.filter((index) => index > 0).map((index) => batch.lines[index - 1] as SettlementItem);
    if (taken.length === 0) throw error;
    return { outcome: 'taken', taken };
  }
}

export async function getBatch(batchId: string): Promise<SettlementBatch | undefined> {
  const { Item } = await documentClient.send(new GetCommand({ TableName: tableName, Key: keys.settlementBatch(batchId), ConsistentRead: true }));
  return Item === undefined ? undefined : toBatch(Item);
}

/** One partner's batches, or (no partner) every partner's; newest first, filtered, paged. */
export function listBatches(partnerId: string | undefined, filters: BatchFilters, page: { limit: number; cursor?: string | undefined }): Promise<Page<SettlementBatch>> {
  const status = statusFilter(filters.status);
  const filter =
    filters.clientId === undefined
      ? status
      : {
          expression: [status?.expression, '#clientId = :clientId'].filter((part) => part !== undefined).join(' AND '),
          names: { ...status?.names, '#clientId': 'clientId' },
          values: { ...status?.values, ':clientId': filters.clientId },
        };
  return queryPage({
    ...(partnerId === undefined
      ? { index: 'gsi2' as const, partition: keys.allSettlementBatches }
      : { index: 'gsi1' as const, partition: keys.settlementBatchesOf(partnerId) }),
    filter,
    ...page,
    toItem: toBatch,
  });
}


/** The claim's update: a `pending` or `failed` batch with no live claim (none, or one whose lease ended). */
const claimUpdate = (batchId: string, claim: { id: string; expiresAt: string }, now: string) => ({
  TableName: tableName,
  Key: keys.settlementBatch(batchId),
  UpdateExpression: 'SET payoutClaim = :claim, payoutAttempts = if_not_exists(payoutAttempts, :zero) + :one, updatedAt = :now',
  ConditionExpression:
    'attribute_exists(pk) AND #status IN (:pending, :failed) AND (attribute_not_exists(payoutClaim) OR payoutClaim = :none OR payoutClaim.expiresAt < :now)',
  ExpressionAttributeNames: { '#status': 'status' },
  ExpressionAttributeValues: { ':claim': claim, ':zero': 0, ':one': 1, ':now': now, ':pending': 'pending', ':failed': 'failed', ':none': null },
  ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
});

/**
 * Claims a batch for one payout attempt: only a `pending` or `failed` batch with no live claim (none, or one
 * whose lease ended: its payout was cut off) can be claimed; two concurrent pays cannot both hold it. With
 * `audit`, the event is written in the claim's own transaction (recorded if and only if the claim is taken).
 */
export async function claimPayout(batchId: string, claim: { id: string; expiresAt: string }, now: string, audit?: AuditEvent): Promise<PayoutClaim> {
  if (audit !== undefined) return claimPayoutAudited(batchId, claim, now, audit);
  try {
    const { Attributes } = await documentClient.send(new UpdateCommand({ ...claimUpdate(batchId, claim, now), ReturnValues: 'ALL_NEW' }));
    return { outcome: 'claimed', batch: toBatch(Attributes ?? {}) };
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    const old = failedItem(error);
    return { outcome: 'refused', batch: old === undefined ? undefined : toBatch(old) };
  }
}

/**
 * The claim and its audit event in one transaction, then the batch read as claimed (a transaction returns no
 * new image; while the claim is live only its holder changes the batch, so the read sees exactly the claim).
 */
async function claimPayoutAudited(batchId: string, claim: { id: string; expiresAt: string }, now: string, audit: AuditEvent): Promise<PayoutClaim> {
  try {
    await transactWrite([{ Update: claimUpdate(batchId, claim, now) }, putAuditEvent(audit)]);
  } catch (error) {
    if (!failedConditions(error).includes(0)) throw error;
    const old = cancelledItem(error, 0);
    return { outcome: 'refused', batch: old === undefined ? undefined : toBatch(old) };
  }
  const batch = await getBatch(batchId);
  if (batch === undefined) throw new Error(`batch ${batchId} claimed but not found`);
  return { outcome: 'claimed', batch };
}

/** Gives a claim back without a payout attempt (the payee may not be paid now): only the claim goes. */
export async function releasePayoutClaim(batch: SettlementBatch, claimId: string, now: string): Promise<void> {
  await writeIfCondition(
    documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.settlementBatch(batch.id),
        UpdateExpression: 'SET updatedAt = :now REMOVE payoutClaim',
        ConditionExpression: 'payoutClaim.id = :claimId',
        ExpressionAttributeValues: { ':claimId': claimId, ':now': now },
      }),
    ),
  );
}

/** The batch's update that ends a payout attempt, conditional on still holding the claim. */
const endOfClaim = (batch: SettlementBatch, claimId: string, set: string, values: Record<string, unknown>): TransactItem => ({
  Update: {
    TableName: tableName,
    Key: keys.settlementBatch(batch.id),
    UpdateExpression: `SET ${set}, updatedAt = :now REMOVE payoutClaim`,
    ConditionExpression: 'payoutClaim.id = :claimId',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: { ...values, ':claimId': claimId },
  },
});


/**
 * The payout made: the batch `sent` with its transfer, and every line `queued -> paid`, in one transaction
 * (100 items at most: the batch and its ≤ 99 lines).
 */
export async function recordPayoutSent(batch: SettlementBatch, claimId: string, transferId: string | null, now: string): Promise<PayoutRecord> {
  const items: TransactItem[] = [
    endOfClaim(batch, claimId, '#status = :sent, transferId = :transferId, failureReason = :none, failureDetail = :none', {
      ':sent': 'sent',
      ':transferId': transferId,
      ':none': null,
      ':now': now,
    }),
    ...batch.lines.map((line): TransactItem => ({
      Update: {
        TableName: tableName,
        Key: entryTableKey(line),
        UpdateExpression: 'SET settlementStatus = :paid, updatedAt = :now',
        ConditionExpression: 'settlementStatus = :queued AND batchId = :batchId',
        ExpressionAttributeValues: { ':paid': 'paid', ':queued': 'queued', ':batchId': batch.id, ':now': now },
      },
    })),
  ];
  try {
    await transactWrite(items);
    return 'recorded';
  } catch (error) {
    if (failedConditions(error).includes(0)) return 'claim-lost';
    throw error;
  }
}

/**
 * The payout refused, or its outcome unknown: `failed` with the reason partners see and the detail operators do
 * (the transfer ids stay null until paid).
 */
export async function recordPayoutFailed(
  batch: SettlementBatch,
  claimId: string,
  failure: { reason: string; detail: string },
  now: string,
): Promise<PayoutRecord> {
  try {
    await transactWrite([
      endOfClaim(batch, claimId, '#status = :failed, failureReason = :reason, failureDetail = :detail', {
        ':failed': 'failed',
        ':reason': failure.reason,
        ':detail': failure.detail,
        ':now': now,
      }),
    ]);
    return 'recorded';
  } catch (error) {
    if (isConditionFailure(error)) return 'claim-lost';
    throw error;
  }
}
