/**
 * Cursor paging over a Query (decisions.md §9): newest first, `limit` items a page, filter expressions
 * allowed. A page is filled up to `limit` even when a filter drops items (up to a bounded number of reads;
 * past it the page is short and its cursor continues), and `next_cursor` is null exactly on the last page
 * (the repository reads one item past the page to know). The cursor is the base64url of the last returned
 * item's key, sealed: an HMAC-SHA256 with the service's cursor key over that payload and the query it belongs
 * to (index, partition, range, filter, order). So a cursor that was altered, made up, or issued for another
 * query or partner is a 400 VALIDATION_ERROR before anything reaches DynamoDB.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { fieldValidationError } from '../domain/errors';
import { cursorKey } from '../secrets/cursor-key';
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

const keyNames = (index: PageQuery<unknown>['index']) =>
  index === undefined
    ? { pk: PARTITION_KEY, sk: SORT_KEY }
    : { pk: `${index}pk`, sk: `${index}sk` };

/** What a cursor is bound to: everything that decides which items a query returns, and in what order. */
const scopeOf = (query: PageQuery<unknown>) =>
  JSON.stringify([
    'cursor/v1',
    query.index ?? 'table',
    query.partition,
    query.sortFrom ?? null,
    query.sortTo ?? null,
    query.filter?.expression ?? null,
    query.filter?.values ?? null,
    query.newestFirst ?? true,
  ]);

/** `<payload>.<tag>`, both base64url; the tag (a SHA-256 HMAC) always has 43 characters. */
const CURSOR_FORMAT = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/;

const tagOf = (secret: Buffer, scope: string, payload: string) =>
  createHmac('sha256', secret).update(`${scope}\n${payload}`, 'utf8').digest('base64url');

function sealCursor(secret: Buffer, scope: string, key: Key): string {
  const payload = Buffer.from(JSON.stringify(key), 'utf8').toString('base64url');
  return `${payload}.${tagOf(secret, scope, payload)}`;
}

/** The key a cursor continues from, if this service sealed it for this very query; else 400 on `cursor`. */
function openCursor(secret: Buffer, scope: string, cursor: string): Key {
  const [, payload, tag] = CURSOR_FORMAT.exec(cursor) ?? [];
  // Compares the tag's text, not its decoded bytes: base64url's last character carries bits decoding ignores.
  if (payload === undefined || tag === undefined || !timingSafeEqual(Buffer.from(tag), Buffer.from(tagOf(secret, scope, payload)))) {
    throw fieldValidationError('cursor', 'Invalid cursor: pass the next_cursor of the same list, with the same filters, unchanged');
  }
  return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Key;
}

/** The filter of a list narrowed to one `status` (or none), as {@link PageQuery.filter} takes it. */
export const statusFilter = (status: string | undefined): PageQuery<unknown>['filter'] =>
  status === undefined ? undefined : { expression: '#status = :status', names: { '#status': 'status' }, values: { ':status': status } };

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

  const scope = scopeOf(query);
  let startKey: Key | undefined = query.cursor === undefined ? undefined : openCursor(await cursorKey(), scope, query.cursor);
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
    nextCursor = sealCursor(await cursorKey(), scope, Object.fromEntries(keyAttributes.map((name) => [name, String(last[name])])));
  } else if (stoppedAt !== undefined) {
    // A very selective filter: the page is short, and the cursor continues where the reading stopped.
    nextCursor = sealCursor(await cursorKey(), scope, stoppedAt);
  }
  return { items: pageItems.map(query.toItem), nextCursor };
}
