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
import { cursorKey } from '../secrets/cursor-key';
import { documentClient, tableName } from './dynamo';
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
  const pageItems = raw.slice(0, query.limit);
  const last = pageItems.at(-1);
  let nextCursor: string | null = null;
  if (raw.length > query.limit && last !== undefined) {
    nextCursor = sealCursor(await cursorKey(), scope, valuesAt(last));
  } else if (stoppedAt !== undefined) {
    // A very selective filter: the page is short, and the cursor continues where the reading stopped.
    nextCursor = sealCursor(await cursorKey(), scope, valuesAt(stoppedAt));
  }
  return { items: pageItems.map(query.toItem), nextCursor };
}
