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
import { QueryCommand, type QueryCommandInput, GetCommand, UpdateCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import type { AuditEvent } from '../domain/audit';
import { currencyCode } from '../domain/money';
import type { BatchStatus, SettlementBatch, SettlementItem } from '../domain/settlement';
import { timeLeftMs } from '../deadline';
import { putAuditEvent } from './audit-events';
import { batchGetAll } from './batch-get';
import { cancelledItem, failedConditions, failedItem, isConditionFailure, writeIfCondition } from './conditions';
import { documentClient, tableName } from './dynamo';
import { keys, type TableKey } from './keys';
import { type Page, queryPage, statusFilter } from './paging';
import { isConflictOnly, transactWrite } from './transact';

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** The table key of a line: the transaction itself, or its adjustment item. */
const lineKey = (line: SettlementItem): TableKey =>
  line.kind === 'transaction' ? keys.transaction(line.svcTxId) : keys.adjustment(line.svcTxId, line.reversal ?? 'refund');

/** What a waiting index item is as a settlement item; `undefined` for a transaction without its fee split. */
function toWaitingItem(raw: Record<string, unknown>): SettlementItem | undefined {
  const common = {
    svcTxId: raw.svcTxId as string,
    partnerId: raw.partnerId as string,
    clientId: raw.clientId as string,
    partnerReference: raw.partnerReference as string,
    currency: currencyCode(raw.currency as string),
    createdAt: raw.createdAt as string,
  };
  if (raw.entity === 'settlementAdjustment') {
    return {
      kind: 'adjustment',
      reversal: raw.kind as 'refund' | 'chargeback',
      ...common,
      grossMinor: raw.grossMinor as number,
      processorFeeMinor: raw.processorFeeMinor as number,
      platformFeeMinor: raw.platformFeeMinor as number,
      netMinor: raw.netAmountMinor as number,
    };
  }
  const fees = raw.fees as { processorFeeMinor: number; platformFeeMinor: number; netAmountMinor: number } | null | undefined;
  // A succeeded transaction always has its split (written in the same move); without one its net is unknown,
  // and nothing is paid on a guess.
  if (fees === null || fees === undefined) return undefined;
  return {
    kind: 'transaction',
    reversal: null,
    ...common,
    grossMinor: raw.amountMinor as number,
    processorFeeMinor: fees.processorFeeMinor,
    platformFeeMinor: fees.platformFeeMinor,
    netMinor: fees.netAmountMinor,
  };
}

/**
 * The waiting transactions one run reads per partner: about 200 batches, more than one HTTP run writes in its
 * time (`npm run bench -- settlement`: ~850 transactions/s locally), within a scheduled run's 15 minutes.
 */
const MAX_WAITING_TRANSACTIONS = 20_000;
/** Items a Query evaluates per page (before the filter drops today's): a fixed size, so a cut-off never means tiny pages. */
const PAGE_SIZE = 1_000;
/** Reading stops with this much of the request's time left, so the run keeps time to write what it read. */
const READ_RESERVE_MS = 10_000;

export interface WaitingRead {
  items: SettlementItem[];
  /** Succeeded transactions in the index without a fee split: never paid on a guess, reported instead. */
  withoutFees: string[];
  /** Adjustments held back: the payment they reverse is in a batch not yet paid (they wait until it is). */
  held: number;
}

/**
 * Everything of one partner waiting for settlement (optionally one client's): succeeded transactions created
 * before `cutoff`, and the waiting adjustments whose reversed payment has been paid out (money owed back is
 * deducted at the first chance, but never before the money it reverses was paid: that batch might still fail).
 * A Query on the sparse index: its cost grows with what waits, not with the table's history.
 *
 * At most `maxTransactions` transactions are taken, and reading stops {@link READ_RESERVE_MS} before the request's
 * deadline: a run over a larger backlog settles the first part (oldest first within each client and currency)
 * and leaves the rest for the next run, instead of spending its time budget, and its memory, on reading. Items
 * that cannot be paid now (held adjustments, transactions without fees) do not count towards the limit, so they
 * can never crowd out what can.
 */
export async function listWaiting(
  partnerId: string,
  clientId: string | undefined,
  cutoff: string,
  maxTransactions = MAX_WAITING_TRANSACTIONS,
): Promise<WaitingRead> {
  const names: Record<string, string> = { '#pk': 'gsi3pk', '#entity': 'entity', '#createdAt': 'createdAt', '#kind': 'kind' };
  const values: Record<string, unknown> = { ':pk': keys.settlementPartition(partnerId), ':adjustment': 'settlementAdjustment', ':cutoff': cutoff };
  let condition = '#pk = :pk';
  let filter = '(#entity = :adjustment OR #createdAt < :cutoff)';
  if (clientId !== undefined) {
    names['#sk'] = 'gsi3sk';
    names['#clientId'] = 'clientId';
    values[':clientPrefix'] = `${clientId}#`;
    values[':clientId'] = clientId;
    condition += ' AND begins_with(#sk, :clientPrefix)';
    // The prefix alone would also match a client whose id continues past a '#'.
    filter += ' AND #clientId = :clientId';
  }
  const input: QueryCommandInput = {
    TableName: tableName,
    IndexName: 'gsi3',
    KeyConditionExpression: condition,
    FilterExpression: filter,
    ProjectionExpression: [
      '#entity', 'svcTxId', 'partnerId', 'clientId', 'partnerReference', 'currency', '#createdAt', 'amountMinor', 'fees',
      '#kind', 'grossMinor', 'processorFeeMinor', 'platformFeeMinor', 'netAmountMinor',
    ].join(', '),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
  const found: SettlementItem[] = [];
  const withoutFees: string[] = [];
  let transactions = 0;
  let startKey: Record<string, unknown> | undefined;
  read: do {
    const page = await documentClient.send(new QueryCommand({ ...input, ExclusiveStartKey: startKey, Limit: PAGE_SIZE }));
    startKey = page.LastEvaluatedKey;
    for (const raw of page.Items ?? []) {
      const item = toWaitingItem(raw);
      if (item === undefined) withoutFees.push(raw.svcTxId as string);
      else if (item.kind === 'adjustment') found.push(item);
      else if (transactions++ < maxTransactions) found.push(item);
      else break read;
    }
  } while (startKey !== undefined && (timeLeftMs() ?? Number.POSITIVE_INFINITY) > READ_RESERVE_MS);
  const adjustments = found.filter((item) => item.kind === 'adjustment');
  const paid = await paidTransactions(adjustments.map((item) => item.svcTxId));
  const items = found.filter((item) => item.kind === 'transaction' || paid.has(item.svcTxId));
  return { items, withoutFees, held: found.length - items.length };
}

/** Which of these transactions have been paid out (`settlementStatus: paid`); consistent reads. */
async function paidTransactions(svcTxIds: readonly string[]): Promise<Set<string>> {
  const found = await batchGetAll([...new Set(svcTxIds)].map(keys.transaction), 'svcTxId, settlementStatus');
  return new Set(found.filter((item) => item.settlementStatus === 'paid').map((item) => item.svcTxId as string));
}

const toBatch = (item: Record<string, unknown>): SettlementBatch => ({
  id: item.id as string,
  partnerId: item.partnerId as string,
  clientId: item.clientId as string,
  currency: currencyCode(item.currency as string),
  lines: (item.lines as SettlementItem[]).map((line) => ({ ...line, currency: currencyCode(line.currency) })),
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
 * `created`; `taken`: lines another run took first (nothing written: plan again without them); `contended`:
 * other writes kept cancelling the transaction (DynamoDB's TransactionConflict) past the quick retries (nothing
 * written: try again later).
 */
export type BatchWrite = { outcome: 'created' } | { outcome: 'taken'; taken: SettlementItem[] } | { outcome: 'contended' };

/**
 * Writes a new batch and flips its lines `unsettled -> queued` (out of the index, `batchId` set) in one
 * transaction: at most 100 items, hence {@link MAX_ITEMS_PER_BATCH} lines. Each flip is conditional on the line
 * still waiting (and a transaction still `succeeded`: a refund that won the race keeps it out).
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
        Key: lineKey(line),
        UpdateExpression: 'SET settlementStatus = :queued, batchId = :batchId, updatedAt = :now REMOVE gsi3pk, gsi3sk',
        ConditionExpression:
          line.kind === 'transaction'
            ? 'settlementStatus = :unsettled AND attribute_exists(gsi3pk) AND #status = :succeeded'
            : 'settlementStatus = :unsettled AND attribute_exists(gsi3pk)',
        ...(line.kind === 'transaction' ? { ExpressionAttributeNames: { '#status': 'status' } } : {}),
        ExpressionAttributeValues: {
          ':queued': 'queued',
          ':unsettled': 'unsettled',
          ':batchId': batch.id,
          ':now': batch.createdAt,
          ...(line.kind === 'transaction' ? { ':succeeded': 'succeeded' } : {}),
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

export interface BatchFilters {
  status?: BatchStatus | undefined;
  clientId?: string | undefined;
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

/** `claimed` (the batch as it now is), or `refused` with the batch as it was (`undefined`: no such batch). */
export type PayoutClaim = { outcome: 'claimed'; batch: SettlementBatch } | { outcome: 'refused'; batch: SettlementBatch | undefined };

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

/** `recorded`, or `claim-lost`: the claim lapsed and another payout attempt holds (or ended) it; nothing written. */
export type PayoutRecord = 'recorded' | 'claim-lost';

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
        Key: lineKey(line),
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
