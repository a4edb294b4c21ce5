/**
 * Settlement batches, and how one of any size becomes visible at once (docs/settlement.md, decisions.md §7).
 *
 * A batch is built invisibly, then committed by one conditional write:
 * - `startBuild`: its record, `building`, in no list of batches;
 * - `reserveLines`: each line moved by its own conditional write from the waiting index to the batch's build
 *   partition, only if it still waits (so two runs can never put one line in two batches);
 * - `commitBuild`: its contents written beside it, then one transaction makes it `pending` and visible, if it is
 *   still the run's build and the run still holds the group's lease. A line's settlement status is read through its
 *   batch (`lineSettlementStatus`), so every line turns `queued` at that write and `paid` at the payout's;
 * - `discardBuild`: a build cut off or given up, its lines moved back to waiting, resumably.
 * One run at a time builds a group (partner, client, currency): `claimGroup`, a lease.
 *
 * A payout is claimed by a conditional update (pending or failed, and no live claim), an admin's together with its
 * audit event, and recorded `sent` or `failed` by one write conditional on the claim.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { BatchWriteCommand, GetCommand, PutCommand, UpdateCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import type { AuditEvent } from '../domain/audit';
import { currencyCode } from '../domain/money';
import { type BatchFilters, type BatchStatus, contentsOf, type SettlementBatch, type SettlementItem } from '../domain/settlement';
import { timeLeftMs } from '../deadline';
import { inPool } from '../pool';
import { batchGetAll } from './batch-get';
import type { BuildRecord, GroupKey, PayoutClaim, PayoutRecord, RunContinuation } from '../use-cases/ports/settlement-store';
import { putAuditEvent } from './audit-events';
import { cancelledItem, failedConditions, failedItem, isConditionFailure, writeIfCondition } from './conditions';
import { documentClient, KeysLeftUnprocessed, tableName } from './dynamo';
import { itemId, keys, type TableKey } from './keys';
import { entryTableKey, SALE_KEY } from './ledger-entries';
import { type Page, queryPage, statusFilter } from './paging';
import { queryAll, queryPages } from './query-all';
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

/** A batch's view as stored: its record, with the chunks of its contents (or, written before them, its lines inline). */
function toBatch(item: Record<string, unknown>, chunks: readonly Record<string, unknown>[] = []): SettlementBatch {
  const contents = Array.isArray(item.lines)
    ? contentsOf((item.lines as Record<string, unknown>[]).map(toLine))
    : {
        transactionIds: chunks.filter((chunk) => String(chunk.sk).startsWith('IDS#')).flatMap((chunk) => chunk.transactionIds as string[]),
        adjustments: chunks.filter((chunk) => String(chunk.sk).startsWith('ADJ#')).flatMap((chunk) => (chunk.lines as Record<string, unknown>[]).map(toLine)),
        lineCount: (item.lineCount as number | undefined) ?? 0,
      };
  return {
    id: item.id as string,
    partnerId: item.partnerId as string,
    clientId: item.clientId as string,
    currency: currencyCode(item.currency as string),
    ...contents,
    totals: item.totals as SettlementBatch['totals'],
    status: item.status as BatchStatus,
    rail: item.rail as SettlementBatch['rail'],
    transferId: (item.transferId as string | null | undefined) ?? null,
    payoutClaim: (item.payoutClaim as SettlementBatch['payoutClaim'] | undefined) ?? null,
    payoutAttempts: (item.payoutAttempts as number | undefined) ?? 0,
    failureReason: (item.failureReason as string | null | undefined) ?? null,
    createdAt: item.createdAt as string,
    updatedAt: item.updatedAt as string,
  };
}

/**
 * Chunk sizes: at most this many entries, and at most {@link CHUNK_BYTES} of them as JSON (UTF-8), more than DynamoDB
 * counts for the same values: every chunk stays under its 400 KB item limit whatever partners put in their references
 * and client ids (a line of 255-character references and 128-emoji client ids takes about 1.9 KB).
 */
const IDS_PER_CHUNK = 5_000;
const LINES_PER_CHUNK = 250;
const CHUNK_BYTES = 300_000;

const utf8 = new TextEncoder();

const isVisible = (status: unknown) => status !== 'building' && status !== 'discarded';

/**
 * Starts a batch's build: its record, `building`, listed among the partner's builds (gsi1 `BUILDS#<partner>`) and in
 * no list of batches, so no reader sees it; `build.runId` names the run that may commit it.
 */
export async function startBuild(batch: SettlementBatch, runId: string): Promise<void> {
  const { transactionIds: _ids, adjustments: _adjustments, ...record } = batch;
  await transactWrite([
    {
      Put: {
        TableName: tableName,
        Item: { ...keys.settlementBatch(batch.id), ...keys.settlementBuildIndex(batch.partnerId, batch.id, batch.createdAt), entity: 'settlementBatch', ...record, status: 'building', build: { runId } },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    ...Array.from({ length: RESERVE_CONCURRENCY }, (_, copy) => ({
      Put: { TableName: tableName, Item: { ...keys.settlementBuildCheck(batch.id, copy), entity: 'settlementBuildCheck', status: 'building', runId } },
    })),
  ]);
}

/**
 * Lines reserved per transaction (DynamoDB's limit is 100 items, one is the build's check), reservation workers (each
 * with its own copy of the build's status to check: `keys.settlementBuildCheck`), and tries of a slice.
 */
const RESERVE_PER_WRITE = 99;
const RESERVE_CONCURRENCY = 4;
const RESERVE_TRIES = 5;

/** A line's reservation: from the waiting index to the build's partition, if it still waits as the run read it. */
function reservation(batch: Pick<SettlementBatch, 'id' | 'partnerId' | 'createdAt'>, line: SettlementItem): TransactItem {
  return {
    Update: {
      TableName: tableName,
      Key: entryTableKey(line),
      UpdateExpression: 'SET gsi3pk = :build, batchId = :batchId, updatedAt = :now',
      ConditionExpression:
        line.key === SALE_KEY
          ? `gsi3pk IN (:waiting, :waitingBefore) AND settlementStatus = :unsettled AND #status ${line.settlesTransaction ? '=' : '<>'} :succeeded AND ${
              (line.revision ?? 0) === 0 ? '(attribute_not_exists(revision) OR revision = :revision)' : 'revision = :revision'
            }`
          : 'gsi3pk IN (:waiting, :waitingBefore) AND settlementStatus = :unsettled',
      ...(line.key === SALE_KEY ? { ExpressionAttributeNames: { '#status': 'status' } } : {}),
      ExpressionAttributeValues: {
        ':build': keys.settlementBuildPartition(batch.id),
        // Waiting: in its shard, or still in the partition before the shards.
        ':waiting': keys.settlementShardOf(batch.partnerId, line.svcTxId),
        ':waitingBefore': keys.settlementPartitionBeforeShards(batch.partnerId),
        ':unsettled': 'unsettled',
        ':batchId': batch.id,
        ':now': batch.createdAt,
        ...(line.key === SALE_KEY ? { ':succeeded': 'succeeded', ':revision': line.revision ?? 0 } : {}),
      },
    },
  };
}

/**
 * The check every reservation goes with: the build is still `building` and still this run's. A run that stalled past
 * its lease (frozen mid-build, say) and came back cannot reserve into a build another run has discarded since, or
 * forgotten: those lines would be in no batch and never back in the waiting index.
 */
const buildStillMine = (batchId: string, runId: string, copy: number): TransactItem => ({
  ConditionCheck: {
    TableName: tableName,
    Key: keys.settlementBuildCheck(batchId, copy),
    ConditionExpression: '#status = :building AND runId = :runId',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: { ':building': 'building', ':runId': runId },
  },
});

/**
 * Reserves lines for a building batch: each moves, on its own condition, from the waiting index (its shard of
 * `SETTLE#<partner>`, or the partition before the shards) to the batch's build partition (`BUILD#<batch>`), with
 * `batchId` set. A line is reserved only if it still waits (so no line is ever in two batches) and, a sale, is as the
 * run read it (still `succeeded` if the batch pays it, and no refund or dispute since: its revision); and only while
 * the build is still this run's (`buildStillMine`, in the same transaction). Returns the lines reserved; the others
 * are left as they are (taken by another run, or changed: they wait for the next run).
 *
 * The writes go 99 to a transaction, with the build's check, for speed (one request instead of a hundred): a
 * transaction whose conditions fail on some lines is written again without them, and one that other writes keep
 * cancelling is written line by line (each with the check). Until the commit nothing reads the reservation as more
 * than "waiting", so no atomicity across lines is needed. A write whose answer was lost may have been applied (the
 * SDK's retry then fails its condition): so every line not known reserved is read again, strongly consistent, and one
 * that holds this batch's id is counted reserved, so that the batch's totals hold every line it took.
 */
export async function reserveLines(batch: Pick<SettlementBatch, 'id' | 'partnerId' | 'createdAt'>, lines: readonly SettlementItem[], runId: string): Promise<SettlementItem[]> {
  const slices = Array.from({ length: Math.ceil(lines.length / RESERVE_PER_WRITE) }, (_, n) => lines.slice(n * RESERVE_PER_WRITE, (n + 1) * RESERVE_PER_WRITE));
  /** A slice's lines reserved, or `lost`: the build is no longer this run's, and nothing more goes into it. */
  const reserveSlice = async (slice: readonly SettlementItem[], check: TransactItem): Promise<SettlementItem[] | 'lost'> => {
    let left = slice;
    for (let tries = 1; left.length > 0 && tries <= RESERVE_TRIES; tries++) {
      try {
        await transactWrite([check, ...left.map((line) => reservation(batch, line))]);
        return [...left];
      } catch (error) {
        const failed = new Set(failedConditions(error));
        if (failed.has(0)) return 'lost';
        if (failed.size > 0) left = left.filter((_, i) => !failed.has(i + 1));
        else if (!isConflictOnly(error)) throw error;
        else await sleep(20 * tries);
      }
    }
    return left.length === 0 ? [] : reserveOneByOne(batch, left, check);
  };
  // Worker w takes slices w, w + 4, ... one after another, checking its own copy of the build's status.
  const reserved = await Promise.all(
    Array.from({ length: RESERVE_CONCURRENCY }, async (_, worker) => {
      const check = buildStillMine(batch.id, runId, worker);
      const mine: SettlementItem[] = [];
      for (let n = worker; n < slices.length; n += RESERVE_CONCURRENCY) {
        const got = await reserveSlice(slices[n] as SettlementItem[], check);
        if (got === 'lost') break;
        mine.push(...got);
      }
      return mine;
    }),
  );
  const taken = new Set(reserved.flat());
  for (const line of await reservedAfterAll(batch.id, lines.filter((line) => !taken.has(line)))) taken.add(line);
  return lines.filter((line) => taken.has(line));
}

/** The lines of a slice that other writes kept cancelling, one conditional update each (with the build's check). */
async function reserveOneByOne(batch: Pick<SettlementBatch, 'id' | 'partnerId' | 'createdAt'>, lines: readonly SettlementItem[], check: TransactItem): Promise<SettlementItem[] | 'lost'> {
  const reserved: SettlementItem[] = [];
  for (const line of lines) {
    try {
      await transactWrite([check, reservation(batch, line)]);
      reserved.push(line);
    } catch (error) {
      const failed = failedConditions(error);
      if (failed.includes(0)) return 'lost';
      // Its condition failed (taken or changed), or an event's transaction on the line's item right now: it changes
      // the line, so it is left for the next run.
      if (failed.length === 0 && !isConflictOnly(error)) throw error;
    }
  }
  return reserved;
}

/** Of lines whose reservation failed or was not tried to the end, those that hold this batch's id all the same (a write applied whose answer was lost). */
async function reservedAfterAll(batchId: string, lines: readonly SettlementItem[]): Promise<SettlementItem[]> {
  if (lines.length === 0) return [];
  const items = await batchGetAll(lines.map(entryTableKey), 'pk, sk, batchId, gsi3pk');
  const holding = new Set(items.filter((item) => item.batchId === batchId && item.gsi3pk === keys.settlementBuildPartition(batchId)).map(itemId));
  return lines.filter((line) => holding.has(itemId(entryTableKey(line))));
}

/** Puts items with BatchWriteItem, 25 a call, asking again for what a call leaves unprocessed. */
async function putAll(items: Record<string, unknown>[]): Promise<void> {
  await inPool(
    Array.from({ length: Math.ceil(items.length / 25) }, (_, i) => items.slice(i * 25, i * 25 + 25)),
    4,
    async (slice) => {
      let pending = slice.map((Item) => ({ PutRequest: { Item } }));
      for (let tries = 1; pending.length > 0; tries++) {
        if (tries > 8) throw new KeysLeftUnprocessed(`BatchWriteItem left ${pending.length} items unprocessed`);
        if (tries > 1) await sleep(20 * 2 ** tries);
        const result = await documentClient.send(new BatchWriteCommand({ RequestItems: { [tableName]: pending } }));
        pending = (result.UnprocessedItems?.[tableName] ?? []) as typeof pending;
      }
    },
  );
}

/** A batch's contents as chunk items: its transaction ids, its other entries, and every line. */
function contentChunks(batch: SettlementBatch, lines: readonly SettlementItem[]): Record<string, unknown>[] {
  const chunks: Record<string, unknown>[] = [];
  const slices = <T>(all: readonly T[], size: number) => {
    const made: T[][] = [];
    let bytes = 0;
    for (const entry of all) {
      const entryBytes = utf8.encode(JSON.stringify(entry)).length + 1;
      const last = made.at(-1);
      if (last === undefined || last.length === size || bytes + entryBytes > CHUNK_BYTES) {
        made.push([entry]);
        bytes = entryBytes;
      } else {
        last.push(entry);
        bytes += entryBytes;
      }
    }
    return made;
  };
  slices(batch.transactionIds, IDS_PER_CHUNK).forEach((transactionIds, n) => chunks.push({ ...keys.batchChunk(batch.id, 'IDS', n), entity: 'batchChunk', transactionIds }));
  slices(batch.adjustments, LINES_PER_CHUNK).forEach((adjustments, n) => chunks.push({ ...keys.batchChunk(batch.id, 'ADJ', n), entity: 'batchChunk', lines: adjustments }));
  slices(lines, LINES_PER_CHUNK).forEach((slice, n) => chunks.push({ ...keys.batchChunk(batch.id, 'LINES', n), entity: 'batchChunk', lines: slice }));
  return chunks;
}

/**
 * Commits a built batch: its contents written beside it (invisible: nothing reads a building batch's chunks), then
 * one conditional transaction makes it `pending` and lists it with the partner's batches, on two conditions: it is
 * still this run's build (a run that took over a lapsed build discards it instead), and this run still holds the
 * group's lease. From that write on, the batch is visible whole and every line it reserved reads `queued` (a line's
 * settlement status follows its batch). `lost`: nothing committed; the build is the caller's to discard.
 */
export async function commitBuild(batch: SettlementBatch, lines: readonly SettlementItem[], runId: string, group: GroupKey): Promise<'committed' | 'lost'> {
  await putAll(contentChunks(batch, lines));
  const index = keys.settlementBatchIndex(batch.partnerId, batch.id, batch.createdAt);
  try {
    await transactWrite([
      {
        Update: {
          TableName: tableName,
          Key: keys.settlementBatch(batch.id),
          UpdateExpression:
            'SET #status = :pending, totals = :totals, lineCount = :lineCount, transactionCount = :transactionCount, adjustmentCount = :adjustmentCount, gsi1pk = :gsi1pk, gsi1sk = :gsi1sk, gsi2pk = :gsi2pk, gsi2sk = :gsi2sk REMOVE build',
          ConditionExpression: '#status = :building AND build.runId = :runId',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':pending': 'pending',
            ':building': 'building',
            ':runId': runId,
            ':totals': batch.totals,
            ':lineCount': lines.length,
            ':transactionCount': batch.transactionIds.length,
            ':adjustmentCount': batch.adjustments.length,
            ':gsi1pk': index.gsi1pk,
            ':gsi1sk': index.gsi1sk,
            ':gsi2pk': index.gsi2pk,
            ':gsi2sk': index.gsi2sk,
          },
        },
      },
      { ConditionCheck: { TableName: tableName, Key: groupKey(group), ConditionExpression: 'lease.runId = :runId', ExpressionAttributeValues: { ':runId': runId } } },
    ]);
    return 'committed';
  } catch (error) {
    if (isConditionFailure(error)) return 'lost';
    throw error;
  }
}

/** One partner's builds (gsi1 `BUILDS#<partner>`): usually none. */
export async function listBuilds(partnerId: string): Promise<BuildRecord[]> {
  const items = await queryAll({
    TableName: tableName,
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.settlementBuildsOf(partnerId) },
  });
  return items.map((item) => ({
    id: item.id as string,
    partnerId: item.partnerId as string,
    clientId: item.clientId as string,
    currency: item.currency as string,
    status: item.status as BuildRecord['status'],
    discardedAt: (item.discardedAt as string | undefined) ?? null,
  }));
}

/**
 * Discards a build (or goes on discarding one): the record `discarded` first (a committed batch is left alone:
 * `committed`), then every line it reserved moved back to the waiting index, each on its own condition (still this
 * batch's). Resumable: a discard cut off is done again by the next run. The record stays among the partner's builds
 * until {@link forgetBuild}, so that a line a lapsed run reserved after the release is released by the next discard.
 */
export async function discardBuild(build: Pick<BuildRecord, 'id' | 'partnerId'>, now: string): Promise<'discarded' | 'committed' | 'unfinished'> {
  // The record and every copy of its status at once: from here no reservation goes into it.
  let marked = true;
  try {
    await transactWrite([
      {
        Update: {
          TableName: tableName,
          Key: keys.settlementBatch(build.id),
          UpdateExpression: 'SET #status = :discarded, discardedAt = if_not_exists(discardedAt, :now), updatedAt = :now REMOVE build',
          ConditionExpression: '#status IN (:building, :discarded)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':discarded': 'discarded', ':building': 'building', ':now': now },
        },
      },
      ...Array.from({ length: RESERVE_CONCURRENCY }, (_, copy) => ({
        Update: {
          TableName: tableName,
          Key: keys.settlementBuildCheck(build.id, copy),
          UpdateExpression: 'SET #status = :discarded, entity = :entity',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':discarded': 'discarded', ':entity': 'settlementBuildCheck' },
        },
      })),
    ]);
  } catch (error) {
    if (!failedConditions(error).includes(0)) throw error;
    marked = false;
  }
  if (!marked) return 'committed';
  const reserved = queryPages({
    TableName: tableName,
    IndexName: 'gsi3',
    KeyConditionExpression: 'gsi3pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.settlementBuildPartition(build.id) },
    ProjectionExpression: 'pk, sk, svcTxId',
  });
  for await (const page of reserved) {
    // Out of time: the rest is moved back by the next run (or this run's continuation), which discards it again.
    if ((timeLeftMs() ?? Number.POSITIVE_INFINITY) < DISCARD_RESERVE_MS) return 'unfinished';
    await inPool(page, DISCARD_CONCURRENCY, (item) =>
      writeIfCondition(
        documentClient.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { pk: item.pk, sk: item.sk },
            UpdateExpression: 'SET gsi3pk = :waiting, updatedAt = :now REMOVE batchId',
            ConditionExpression: 'batchId = :batchId AND gsi3pk = :build',
            // Back to its payment's shard (a line reserved from the partition before the shards moves on to it).
            ExpressionAttributeValues: { ':waiting': keys.settlementShardOf(build.partnerId, item.svcTxId as string), ':batchId': build.id, ':build': keys.settlementBuildPartition(build.id), ':now': now },
          }),
        ),
      ),
    );
  }
  return 'discarded';
}

/** Lines moved back at once by a discard; and the time a discard leaves its request (it stops between pages). */
const DISCARD_CONCURRENCY = 16;
const DISCARD_RESERVE_MS = 6_000;

/** A discarded build, released, taken off the partner's builds (it stays as a record no list shows). */
export async function forgetBuild(buildId: string): Promise<void> {
  await writeIfCondition(
    documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.settlementBatch(buildId),
        UpdateExpression: 'REMOVE gsi1pk, gsi1sk',
        ConditionExpression: '#status = :discarded',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':discarded': 'discarded' },
      }),
    ),
  );
}

const groupKey = (group: GroupKey) => keys.settlementGroup(group.partnerId, group.clientId, group.currency);

/**
 * Takes a group's lease for a run (none held, or lapsed, or already this run's): one run at a time builds a group's
 * batches. `false`: another run holds it.
 */
export function claimGroup(group: GroupKey, runId: string, expiresAt: string, now: string): Promise<boolean> {
  return writeIfCondition(
    documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: groupKey(group),
        UpdateExpression: 'SET lease = :lease',
        ConditionExpression: 'attribute_not_exists(lease) OR lease.expiresAt < :now OR lease.runId = :runId',
        ExpressionAttributeValues: { ':lease': { runId, expiresAt }, ':now': now, ':runId': runId },
      }),
    ),
  );
}

/** Gives a group's lease back, if this run still holds it. */
export async function releaseGroup(group: GroupKey, runId: string): Promise<void> {
  await writeIfCondition(
    documentClient.send(
      new UpdateCommand({ TableName: tableName, Key: groupKey(group), UpdateExpression: 'REMOVE lease', ConditionExpression: 'lease.runId = :runId', ExpressionAttributeValues: { ':runId': runId } }),
    ),
  );
}

/** The marker of a scope's continuation waiting to run. */
const continuationKey = (scope: RunContinuation['scope']): TableKey => keys.settlementContinuation(JSON.stringify([scope.partnerId ?? null, scope.clientId ?? null]));

/** Marks a continuation of `scope` as waiting to run until `until`: `false` when one already is (and has not lapsed). */
export function markContinuationPending(scope: RunContinuation['scope'], until: string, now: string): Promise<boolean> {
  return writeIfCondition(
    documentClient.send(
      new PutCommand({
        TableName: tableName,
        Item: { ...continuationKey(scope), entity: 'settlementContinuation', until },
        ConditionExpression: 'attribute_not_exists(pk) OR #until < :now',
        ExpressionAttributeNames: { '#until': 'until' },
        ExpressionAttributeValues: { ':now': now },
      }),
    ),
  );
}

/** Clears a scope's marker (lapsed at once: the settlement functions delete nothing): its continuation has started, or was never sent. */
export async function clearContinuationPending(scope: RunContinuation['scope']): Promise<void> {
  await documentClient.send(
    new UpdateCommand({ TableName: tableName, Key: continuationKey(scope), UpdateExpression: 'SET #until = :lapsed, entity = :entity', ExpressionAttributeNames: { '#until': 'until' }, ExpressionAttributeValues: { ':lapsed': '', ':entity': 'settlementContinuation' } }),
  );
}

/** The records and view chunks of a batch's partition (`ADJ#` to `IDS#~`: not its lines). */
function batchItems(batchId: string): Promise<Record<string, unknown>[]> {
  return queryAll({
    TableName: tableName,
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    ExpressionAttributeValues: { ':pk': keys.settlementBatch(batchId).pk, ':from': 'ADJ#', ':to': 'IDS#~' },
    ConsistentRead: true,
  });
}

/** A visible batch (committed), with its view; `undefined` for none, or one still building or discarded. */
export async function getBatch(batchId: string): Promise<SettlementBatch | undefined> {
  const items = await batchItems(batchId);
  const record = items.find((item) => item.sk === keys.settlementBatch(batchId).sk);
  if (record === undefined || !isVisible(record.status)) return undefined;
  return toBatch(record, items);
}

/**
 * Every line of a batch, in its order (its report), a chunk at a time: one `LINES#` item of up to
 * {@link LINES_PER_CHUNK} lines per read (a batch made before chunks: its inline lines, at once).
 */
export async function* batchLineChunks(batchId: string): AsyncGenerator<SettlementItem[]> {
  const { Item } = await documentClient.send(new GetCommand({ TableName: tableName, Key: keys.settlementBatch(batchId), ConsistentRead: true, ProjectionExpression: '#lines', ExpressionAttributeNames: { '#lines': 'lines' } }));
  if (Array.isArray(Item?.lines)) {
    yield (Item.lines as Record<string, unknown>[]).map(toLine);
    return;
  }
  const pages = queryPages({
    TableName: tableName,
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :lines)',
    ExpressionAttributeValues: { ':pk': keys.settlementBatch(batchId).pk, ':lines': 'LINES#' },
    ConsistentRead: true,
    Limit: 1,
  });
  for await (const page of pages) for (const chunk of page) yield (chunk.lines as Record<string, unknown>[]).map(toLine);
}

/**
 * The bytes a batch's view takes in a page, about (its ids and adjustments dominate): a page stops before it
 * passes {@link PAGE_BYTES}, below Lambda's 6 MB response, whatever the batches' sizes (decisions.md §7).
 */
const viewBytes = (item: Record<string, unknown>) =>
  Array.isArray(item.lines)
    ? 1_000 + 400 * item.lines.length
    : 1_000 + 45 * ((item.transactionCount as number | undefined) ?? 0) + 400 * ((item.adjustmentCount as number | undefined) ?? 0);
export const PAGE_BYTES = 4_000_000;
/** Batches whose views are read at once for a page. */
const VIEW_READS = 8;

/** One partner's batches, or (no partner) every partner's; newest first, filtered, paged, each page under {@link PAGE_BYTES}. */
export async function listBatches(partnerId: string | undefined, filters: BatchFilters, page: { limit: number; cursor?: string | undefined }): Promise<Page<SettlementBatch>> {
  const status = statusFilter(filters.status);
  const filter =
    filters.clientId === undefined
      ? status
      : {
          expression: [status?.expression, '#clientId = :clientId'].filter((part) => part !== undefined).join(' AND '),
          names: { ...status?.names, '#clientId': 'clientId' },
          values: { ...status?.values, ':clientId': filters.clientId },
        };
  const records = await queryPage({
    ...(partnerId === undefined
      ? { index: 'gsi2' as const, partition: keys.allSettlementBatches }
      : { index: 'gsi1' as const, partition: keys.settlementBatchesOf(partnerId) }),
    filter,
    ...page,
    maxBytes: { limit: PAGE_BYTES, sizeOf: viewBytes },
    toItem: (item) => item,
  });
  const items = await inPool(records.items, VIEW_READS, async (record) =>
    Array.isArray(record.lines) || record.lineCount === undefined ? toBatch(record) : toBatch(record, await batchItems(record.id as string)),
  );
  return { items, nextCursor: records.nextCursor };
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
    await documentClient.send(new UpdateCommand(claimUpdate(batchId, claim, now)));
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    const old = failedItem(error);
    return { outcome: 'refused', batch: old === undefined || !isVisible(old.status) ? undefined : toBatch(old) };
  }
  return claimed(batchId);
}

/** The batch as claimed, with its view (while the claim is live only its holder changes the batch). */
async function claimed(batchId: string): Promise<PayoutClaim> {
  const batch = await getBatch(batchId);
  if (batch === undefined) throw new Error(`batch ${batchId} claimed but not found`);
  return { outcome: 'claimed', batch };
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
    return { outcome: 'refused', batch: old === undefined || !isVisible(old.status) ? undefined : toBatch(old) };
  }
  return claimed(batchId);
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
 * The payout made: the batch `sent` with its transfer, on the claim. One write whatever the batch's size: its lines
 * read `paid` from that write on (a line's settlement status follows its batch).
 */
export async function recordPayoutSent(batch: SettlementBatch, claimId: string, transferId: string | null, now: string): Promise<PayoutRecord> {
  try {
    await transactWrite([
      endOfClaim(batch, claimId, '#status = :sent, transferId = :transferId, failureReason = :none, failureDetail = :none', {
        ':sent': 'sent',
        ':transferId': transferId,
        ':none': null,
        ':now': now,
      }),
    ]);
    return 'recorded';
  } catch (error) {
    if (isConditionFailure(error)) return 'claim-lost';
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
