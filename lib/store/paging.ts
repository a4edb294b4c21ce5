/**
 * Cursor paging over a Query (decisions.md §9): newest first, `limit` items a page, filter expressions
 * allowed. A page is filled up to `limit` even when a filter drops items (up to a bounded number of reads;
 * past it the page is short and its cursor continues), and `next_cursor` is null exactly on the last page
 * (the repository reads one item past the page to know).
 *
 * A cursor is sealed, confidential as well as authenticated: base64url(iv | ciphertext | tag), AES-256-GCM with
 * the service's cursor key (lib/secrets/cursor-key.ts), a fresh random 12-byte IV per cursor, over the compact
 * JSON array of the last returned item's key values (no attribute names; not the partition, which the query
 * names). The query it belongs to (index, partition, range, filter, order) is the additional authenticated data.
 * So a cursor tells its holder nothing about the table (an API-key list's key values hold the key's hash), and one
 * that was altered, truncated, made up, or issued for another query or partner is a 400 VALIDATION_ERROR before
 * anything reaches DynamoDB.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { fieldValidationError } from '../domain/errors';
import type { Page } from '../domain/page';
import { inPool } from '../pool';
import { cursorKey } from '../secrets/cursor-key';
import { batchGetAll } from './batch-get';
import { documentClient, tableName } from './dynamo';
import { itemId } from './keys';
import { PARTITION_KEY, SORT_KEY } from './table';

export type { Page };

export interface PageQuery<T> {
  index?: 'gsi1' | 'gsi2' | 'gsi3';
  partition: string;
  /** Inclusive bounds on the sort key (time-ordered keys: ISO timestamps, so a date prefix works). */
  sortFrom?: string | undefined;
  sortTo?: string | undefined;
  filter?: { expression: string; names: Record<string, string>; values: Record<string, unknown> } | undefined;
  limit: number;
  cursor?: string | undefined;
  newestFirst?: boolean;
  /** A page also stops before its items pass `limit` bytes by `sizeOf` (at least one item): `limit` is then a maximum. */
  maxBytes?: { limit: number; sizeOf: (raw: Record<string, unknown>) => number } | undefined;
  toItem: (raw: Record<string, unknown>) => T;
}

type Key = Record<string, string>;

/** Items read per Query call when a filter expression may drop some. */
const FILTERED_READ_SIZE = 100;
/** Query calls per page at most, so a rare filter value cannot keep one request reading for long. */
const MAX_READS_PER_PAGE = 10;

const keyNames = (index: PageQuery<unknown>['index']) =>
  index === undefined
    ? { pk: PARTITION_KEY, sk: SORT_KEY }
    : { pk: `${index}pk`, sk: `${index}sk` };

/** What a cursor is bound to (its GCM additional data): all that decides which items a query returns, in what order. */
const scopeOf = (query: PageQuery<unknown>) =>
  JSON.stringify([
    'cursor/v2',
    query.index ?? 'table',
    query.partition,
    query.sortFrom ?? null,
    query.sortTo ?? null,
    query.filter?.expression ?? null,
    query.filter?.values ?? null,
    query.newestFirst ?? true,
  ]);

/**
 * The key attributes a cursor holds the values of, in order: the table's and the index's keys (an index Query's
 * ExclusiveStartKey needs both), less the index partition key, which is the query's own partition.
 */
const positionAttributes = (index: PageQuery<unknown>['index']) => {
  const names = keyNames(index);
  return { partition: names.pk, carried: [...new Set([PARTITION_KEY, SORT_KEY, names.sk])].filter((name) => name !== names.pk) };
};

const IV_BYTES = 12;
const TAG_BYTES = 16;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/**
 * Raised here, naming `cursor`, on purpose: a cursor is the page contract's own parameter (every list port takes
 * `page.cursor` and answers `nextCursor`), sealed and opened by this module alone, so only the store can tell a
 * bad one; the use cases pass it through unchanged, and a translation in each of them would add nothing.
 */
const invalidCursor = () =>
  fieldValidationError('cursor', 'Invalid cursor: pass the next_cursor of the same list, with the same filters, unchanged');

/**
 * A cursor for a list that pages its own way (the balances: groups of index items), bound to `scope` as
 * {@link queryPage}'s are: `values` come back from {@link openListCursor} only for the same scope.
 */
export const sealListCursor = async (scope: string, values: string[]): Promise<string> => sealCursor(await cursorKey(), scope, values);

export const openListCursor = async (scope: string, cursor: string, names: string[]): Promise<Record<string, string>> =>
  openCursor(await cursorKey(), scope, cursor, names);

function sealCursor(key: Buffer, scope: string, values: string[]): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(scope, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(values), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, ciphertext, cipher.getAuthTag()]).toString('base64url');
}

/**
 * The key attributes (`names`, as sealed) a cursor continues from, if this service sealed it for this very query;
 * else 400 on `cursor`.
 */
function openCursor(key: Buffer, scope: string, cursor: string, names: string[]): Key {
  if (!BASE64URL.test(cursor)) throw invalidCursor();
  const sealed = Buffer.from(cursor, 'base64url');
  // Only the canonical encoding: base64url's last character carries bits decoding ignores, and a cursor with
  // them altered must not pass as the same cursor.
  if (sealed.length <= IV_BYTES + TAG_BYTES || sealed.toString('base64url') !== cursor) throw invalidCursor();
  let values: unknown;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(scope, 'utf8'));
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    const plaintext = Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]);
    values = JSON.parse(plaintext.toString('utf8'));
  } catch {
    // A wrong tag (altered, made up, another query's or partner's) or a plaintext this code never wrote.
    throw invalidCursor();
  }
  if (!Array.isArray(values) || values.length !== names.length) throw invalidCursor();
  const entries = names.map((name, i): [string, unknown] => [name, values[i]]);
  if (!entries.every((entry): entry is [string, string] => typeof entry[1] === 'string')) throw invalidCursor();
  return Object.fromEntries(entries);
}

/** The filter of a list narrowed to one `status` (or none), as {@link PageQuery.filter} takes it. */
export const statusFilter = (status: string | undefined): PageQuery<unknown>['filter'] =>
  status === undefined ? undefined : { expression: '#status = :status', names: { '#status': 'status' }, values: { ':status': status } };

/** The first items that fit in the byte budget (always the first one). */
function withinBytes(items: Record<string, unknown>[], budget: PageQuery<unknown>['maxBytes']): Record<string, unknown>[] {
  if (budget === undefined) return items;
  let bytes = 0;
  const fit = items.findIndex((item, i) => (bytes += budget.sizeOf(item)) > budget.limit && i > 0);
  return fit === -1 ? items : items.slice(0, fit);
}

export async function queryPage<T>(query: PageQuery<T>): Promise<Page<T>> {
  const names = keyNames(query.index);
  const position = positionAttributes(query.index);
  const conditions = ['#pk = :pk'];
  const expressionNames: Record<string, string> = { '#pk': names.pk, ...query.filter?.names };
  const expressionValues: Record<string, unknown> = { ':pk': query.partition, ...query.filter?.values };
  if (query.sortFrom !== undefined || query.sortTo !== undefined) {
    expressionNames['#sk'] = names.sk;
    // '\uffff' sorts after every key that starts with the upper bound, so the bound is inclusive.
    if (query.sortFrom !== undefined) expressionValues[':skFrom'] = query.sortFrom;
    if (query.sortTo !== undefined) expressionValues[':skTo'] = `${query.sortTo}\uffff`;
    conditions.push(
      query.sortFrom === undefined ? '#sk <= :skTo' : query.sortTo === undefined ? '#sk >= :skFrom' : '#sk BETWEEN :skFrom AND :skTo',
    );
  }
  const input: QueryCommandInput = {
    TableName: tableName,
    ...(query.index === undefined ? {} : { IndexName: query.index }),
    KeyConditionExpression: conditions.join(' AND '),
    ...(query.filter === undefined ? {} : { FilterExpression: query.filter.expression }),
    ExpressionAttributeNames: expressionNames,
    ExpressionAttributeValues: expressionValues,
    ScanIndexForward: !(query.newestFirst ?? true),
  };

  const scope = scopeOf(query);
  let startKey: Key | undefined =
    query.cursor === undefined
      ? undefined
      : { [position.partition]: query.partition, ...openCursor(await cursorKey(), scope, query.cursor, position.carried) };
  const valuesAt = (item: Record<string, unknown>) => position.carried.map((name) => String(item[name]));
  // Filtered queries read in larger steps (the filter drops items); unfiltered ones read exactly one past the page.
  const readSize = query.filter === undefined ? query.limit + 1 : Math.max(query.limit + 1, FILTERED_READ_SIZE);
  const raw: Record<string, unknown>[] = [];
  let stoppedAt: Key | undefined;
  for (let reads = 1; raw.length <= query.limit; reads++) {
    const result = await documentClient.send(new QueryCommand({ ...input, Limit: readSize, ExclusiveStartKey: startKey }));
    raw.push(...(result.Items ?? []));
    startKey = result.LastEvaluatedKey as Key | undefined;
    if (startKey === undefined) break;
    if (reads === MAX_READS_PER_PAGE) {
      stoppedAt = startKey;
      break;
    }
  }
  const pageItems = withinBytes(raw.slice(0, query.limit), query.maxBytes);
  const last = pageItems.at(-1);
  let nextCursor: string | null = null;
  if (raw.length > pageItems.length && last !== undefined) {
    nextCursor = sealCursor(await cursorKey(), scope, valuesAt(last));
  } else if (stoppedAt !== undefined) {
    // A very selective filter: the page is short, and the cursor continues where the reading stopped.
    nextCursor = sealCursor(await cursorKey(), scope, valuesAt(stoppedAt));
  }
  return { items: pageItems.map(query.toItem), nextCursor };
}

/** One partition a sharded list reads: a shard on its index, or a partition written before the shards. */
export interface ListSource {
  index: 'gsi1' | 'gsi2' | 'gsi5' | 'gsi6';
  partition: string;
}

/**
 * A sharded list's sources: its `count` shards on `index` (`partitionOf` names each), then the partitions that held
 * the list before it was sharded, still read (their items are never moved, or are moved by a backfill).
 */
export const shardedSources = (index: 'gsi5' | 'gsi6', count: number, partitionOf: (shard: number) => string, ...before: ListSource[]): ListSource[] => [
  ...Array.from({ length: count }, (_, shard) => ({ index, partition: partitionOf(shard) })),
  ...before,
];

export interface ShardedPageQuery<T> {
  /** Names the list (and its owner): what its cursors are bound to, with the range, filter and order. */
  list: string;
  /** Every shard, and any partition written before the shards; all share one sort key space (`<time>#<id>`). */
  sources: readonly ListSource[];
  sortFrom?: string | undefined;
  sortTo?: string | undefined;
  /** On attributes every source projects. */
  filter?: PageQuery<T>['filter'];
  limit: number;
  cursor?: string | undefined;
  toItem: (raw: Record<string, unknown>) => T;
}

/** Queries a sharded list's page runs at once. */
const SOURCE_CONCURRENCY = 64;

interface SourceState {
  source: ListSource;
  buffer: Record<string, unknown>[];
  /** Where its next read starts (undefined: from the top, or nothing more when `done`). */
  startKey: Key | undefined;
  done: boolean;
  /** Reads of it for this page. */
  reads: number;
}

/**
 * A page of a list kept over several partitions (shards), newest first: each source is read from the same position,
 * a little at a time, and the sources are merged by the sort key they share, so the page is the `limit` newest items
 * of them all, as one partition would give. Each read of a source asks only for what the merge may need next, and a
 * source is read again only once the merge has used up what it gave.
 *
 * The cursor is one position in that shared order: the last item's sort key and table key, sealed as
 * {@link queryPage}'s are. It is each source's position too: every source continues strictly after it (the position
 * given as each Query's ExclusiveStartKey, with that source's partition). Items written meanwhile sort before it
 * (their keys start with their creation time), so paging never repeats or skips an item. A page's items are read
 * again from the table by key (strongly consistent): the list indexes project only what the filters need.
 *
 * A filter that drops most items is read in larger steps, up to a bounded number of reads a page (one of every source,
 * then 10 more); past it the page is short, holds every match newer than the point where the reading stopped (the
 * newest point any source not read to its end reached), and its cursor continues from there.
 */
export async function queryShardedPage<T>(query: ShardedPageQuery<T>): Promise<Page<T>> {
  const scope = JSON.stringify(['cursor/sharded/v1', query.list, query.sortFrom ?? null, query.sortTo ?? null, query.filter?.expression ?? null, query.filter?.values ?? null]);
  const position = query.cursor === undefined ? undefined : openCursor(await cursorKey(), scope, query.cursor, ['sort', PARTITION_KEY, SORT_KEY]);
  const sortOf = (state: SourceState, item: Record<string, unknown>) => String(item[`${state.source.index}sk`]);
  const states: SourceState[] = query.sources.map((source) => ({
    source,
    buffer: [],
    startKey: position === undefined ? undefined : { [`${source.index}pk`]: source.partition, [`${source.index}sk`]: position.sort!, [PARTITION_KEY]: position[PARTITION_KEY]!, [SORT_KEY]: position[SORT_KEY]! },
    done: false,
    reads: 0,
  }));
  const readSize =
    query.filter === undefined ? Math.max(5, Math.ceil((query.limit + 1) / query.sources.length) + 1) : Math.max(query.limit + 1, FILTERED_READ_SIZE);
  // A filter may drop every item a read returns: one read of every source, then at most as many more as a single
  // partition's page may make. Without one, every read that does not end its source returns items the page takes,
  // so the reads end by themselves (a source read again asks for all the page still lacks).
  const maxReads = query.filter === undefined ? Number.POSITIVE_INFINITY : query.sources.length + MAX_READS_PER_PAGE;
  let reads = 0;
  const sizeOf = (state: SourceState) => (state.reads === 0 || query.filter !== undefined ? readSize : Math.max(readSize, query.limit + 1 - merged.length));

  const read = async (state: SourceState) => {
    const names = { '#pk': `${state.source.index}pk`, ...query.filter?.names };
    const values: Record<string, unknown> = { ':pk': state.source.partition, ...query.filter?.values };
    const conditions = ['#pk = :pk'];
    if (query.sortFrom !== undefined || query.sortTo !== undefined) {
      Object.assign(names, { '#sk': `${state.source.index}sk` });
      if (query.sortFrom !== undefined) values[':skFrom'] = query.sortFrom;
      if (query.sortTo !== undefined) values[':skTo'] = `${query.sortTo}\uffff`;
      conditions.push(query.sortFrom === undefined ? '#sk <= :skTo' : query.sortTo === undefined ? '#sk >= :skFrom' : '#sk BETWEEN :skFrom AND :skTo');
    }
    const result = await documentClient.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: state.source.index,
        KeyConditionExpression: conditions.join(' AND '),
        ...(query.filter === undefined ? {} : { FilterExpression: query.filter.expression }),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ScanIndexForward: false,
        Limit: sizeOf(state),
        ExclusiveStartKey: state.startKey,
      }),
    );
    state.reads += 1;
    state.buffer.push(...(result.Items ?? []));
    state.startKey = result.LastEvaluatedKey as Key | undefined;
    state.done = state.startKey === undefined;
  };

  // Merge newest first: take the newest head while every source that may hold a newer item has one in hand.
  const merged: Array<{ state: SourceState; item: Record<string, unknown> }> = [];
  // An item moved from a partition written before the shards to its shard while this page read both is taken once.
  const taken = new Set<string>();
  const take = (state: SourceState) => {
    const item = state.buffer.shift()!;
    const id = itemId(item);
    if (!taken.has(id)) merged.push({ state, item });
    taken.add(id);
  };
  let stoppedAt: { state: SourceState; key: Key } | undefined;
  while (merged.length <= query.limit) {
    const empty = states.filter((state) => state.buffer.length === 0 && !state.done);
    if (empty.length > 0) {
      if (reads + empty.length > maxReads) {
        // The reading stops here. Every source not read to its end has read down to its own point, in hand or not:
        // every item newer than the newest of those points is in hand. Those go on the page, and the cursor continues
        // from that point (a source with items in hand may still hold unread ones older than them but newer than it).
        const open = states.filter((state) => !state.done);
        const newest = open.reduce((best, state) => (sortOf(state, state.startKey!) > sortOf(best, best.startKey!) ? state : best));
        stoppedAt = { state: newest, key: newest.startKey! };
        break;
      }
      reads += empty.length;
      await inPool(empty, SOURCE_CONCURRENCY, read);
      continue;
    }
    const withItems = states.filter((state) => state.buffer.length > 0);
    if (withItems.length === 0) break;
    take(withItems.reduce((best, state) => (sortOf(state, state.buffer[0]!) > sortOf(best, best.buffer[0]!) ? state : best)));
  }
  if (stoppedAt !== undefined) {
    const bound = sortOf(stoppedAt.state, stoppedAt.key);
    for (;;) {
      const withItems = states.filter((state) => state.buffer.length > 0 && sortOf(state, state.buffer[0]!) > bound);
      if (withItems.length === 0 || merged.length > query.limit) break;
      take(withItems.reduce((best, state) => (sortOf(state, state.buffer[0]!) > sortOf(best, best.buffer[0]!) ? state : best)));
    }
  }

  const page = merged.slice(0, query.limit);
  const positionOf = (state: SourceState, item: Record<string, unknown>) => [sortOf(state, item), String(item[PARTITION_KEY]), String(item[SORT_KEY])];
  const last = page.at(-1);
  const nextCursor =
    merged.length > query.limit && last !== undefined
      ? sealCursor(await cursorKey(), scope, positionOf(last.state, last.item))
      : stoppedAt !== undefined
        ? sealCursor(await cursorKey(), scope, positionOf(stoppedAt.state, stoppedAt.key))
        : null;
  // The page's items as the table holds them now (the index holds the filters' attributes only).
  const full = await batchGetAll(page.map(({ item }) => ({ pk: String(item[PARTITION_KEY]), sk: String(item[SORT_KEY]) })));
  const byKey = new Map(full.map((item) => [itemId(item), item]));
  const items = page.flatMap(({ item }) => {
    const found = byKey.get(itemId(item));
    return found === undefined ? [] : [query.toItem(found)];
  });
  return { items, nextCursor };
}
