/**
 * Cursor paging over a Query (decisions.md §9): newest first, `limit` items a page, filter expressions
 * allowed. A page is filled up to `limit` even when a filter drops items (up to a bounded number of reads;
 * past it the page is short and its cursor continues), and `next_cursor` is null exactly on the last page
 * (the repository reads one item past the page to know). The cursor is the opaque base64url of the last
 * returned item's key, checked on the way back in so that it can only continue the same list and range.
 */
import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { fieldValidationError } from '../domain/errors';
import { documentClient, tableName } from './dynamo';
import { PARTITION_KEY, SORT_KEY } from './table';

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

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
  toItem: (raw: Record<string, unknown>) => T;
}

type Key = Record<string, string>;

/** Items read per Query call when a filter expression may drop some. */
const FILTERED_READ_SIZE = 100;
/** Query calls per page at most, so a rare filter value cannot keep one request reading for long. */
const MAX_READS_PER_PAGE = 10;

/** Whether a sort key lies in the query's inclusive range (the upper bound matches as a prefix). */
const withinRange = (sortKey: string, from: string | undefined, to: string | undefined) =>
  (from === undefined || sortKey >= from) && (to === undefined || sortKey <= `${to}\uffff`);

const keyNames = (index: PageQuery<unknown>['index']) =>
  index === undefined
    ? { pk: PARTITION_KEY, sk: SORT_KEY }
    : { pk: `${index}pk`, sk: `${index}sk` };

export const encodeCursor = (key: Key) => Buffer.from(JSON.stringify(key), 'utf8').toString('base64url');

function decodeCursor(cursor: string, expected: { names: string[]; partitionName: string; partition: string }): Key {
  const invalid = () => fieldValidationError('cursor', 'Invalid cursor');
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (typeof key !== 'object' || key === null || Array.isArray(key)) throw invalid();
  const entries = Object.entries(key);
  const valid =
    entries.length === expected.names.length &&
    entries.every(([name, value]) => expected.names.includes(name) && typeof value === 'string' && value.length > 0 && value.length <= 1024) &&
    (key as Key)[expected.partitionName] === expected.partition;
  if (!valid) throw invalid();
  return key as Key;
}

export async function queryPage<T>(query: PageQuery<T>): Promise<Page<T>> {
  const names = keyNames(query.index);
  const keyAttributes = [...new Set([PARTITION_KEY, SORT_KEY, names.pk, names.sk])];
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

  let startKey: Key | undefined =
    query.cursor === undefined
      ? undefined
      : decodeCursor(query.cursor, { names: keyAttributes, partitionName: names.pk, partition: query.partition });
  if (startKey !== undefined && !withinRange(startKey[names.sk] ?? '', query.sortFrom, query.sortTo)) {
    throw fieldValidationError('cursor', 'The cursor does not belong to this query');
  }
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
  const pageItems = raw.slice(0, query.limit);
  const last = pageItems.at(-1);
  let nextCursor: string | null = null;
  if (raw.length > query.limit && last !== undefined) {
    nextCursor = encodeCursor(Object.fromEntries(keyAttributes.map((name) => [name, String(last[name])])));
  } else if (stoppedAt !== undefined) {
    // A very selective filter: the page is short, and the cursor continues where the reading stopped.
    nextCursor = encodeCursor(stoppedAt);
  }
  return { items: pageItems.map(query.toItem), nextCursor };
}
