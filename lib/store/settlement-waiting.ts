/**
 * What waits for settlement (docs/data-model.md: the sparse settlement index, `SETTLE#<partner_id>#<shard>`): the
 * ledger entries of one partner, read oldest payment first, each payment's entries beside its sale. A settlement run
 * reads them to plan its batches (`listWaiting`), the balances sum them (`lib/store/balances.ts`), both through one
 * merged reading of the shards (`waitingEntries`).
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { inPool } from '../pool';
import { MAX_LINES_PER_BATCH, type SettlementItem } from '../domain/settlement';
import { timeLeftMs } from '../deadline';
import type { WaitingRead } from '../use-cases/ports/settlement-store';
import { documentClient, tableName } from './dynamo';
import { itemId, keys } from './keys';
import { SALE_KEY, toEntry } from './ledger-entries';

/** A waiting index item as a settlement item; `undefined` for a transaction without its fee split. */
function toWaitingItem(raw: Record<string, unknown>): SettlementItem | undefined {
  const entry = toEntry(raw);
  if (entry === undefined) return undefined;
  if (entry.key !== SALE_KEY) return { ...entry, settlesTransaction: false };
  return { ...entry, settlesTransaction: raw.status === 'succeeded', revision: (raw.revision as number | undefined) ?? 0 };
}

/** A filter expression of a waiting-index query, with its names and values. */
export interface WaitingFilter {
  expression: string;
  names: Record<string, string>;
  values: Record<string, unknown>;
}

/** Where a reading of the waiting index starts, and how it reads. */
export interface WaitingReadOptions {
  /** Only entries sorting after this sort key (`gsi3sk`): where a balances page left off. */
  after?: string | undefined;
  /** Items each partition's first Query evaluates, then each later one: small first for a page of a few groups. */
  firstReadSize?: number;
  readSize?: number;
  /** Asked before each round of Queries: `true` ends the reading there (what was yielded is a prefix of the order). */
  stop?: () => boolean;
}

/** Queries of the shards run at once. */
const SHARD_CONCURRENCY = 33;

interface Source {
  partition: string;
  buffer: Record<string, unknown>[];
  startKey: Record<string, unknown> | undefined;
  done: boolean;
}

/**
 * One partner's waiting entries (optionally one client's) in the settlement index's order, oldest payment first,
 * each payment's entries beside its sale, whatever shard holds them (docs/data-model.md): every shard, and the
 * partition before the shards, queried side by side and merged by the sort key (`<client>#<currency>#<created>#<id>`,
 * unique). An entry yields only once every partition still being read has one in hand, so whatever was yielded when
 * the reading stops is exactly the first part of the order. `filters` are ANDed on every Query; a client's entries are
 * a key range, with the client id itself as a filter too (the range alone would also take a client whose id continues
 * past a '#').
 */
export async function* waitingEntries(partnerId: string, clientId: string | undefined, filters: WaitingFilter[], options: WaitingReadOptions = {}): AsyncGenerator<Record<string, unknown>> {
  const all = [...filters];
  const names: Record<string, string> = { '#pk': 'gsi3pk' };
  const values: Record<string, unknown> = {};
  let condition = '#pk = :pk';
  const from = clientId === undefined ? options.after : [options.after ?? '', `${clientId}#`].sort().at(-1);
  if (clientId !== undefined) {
    names['#sk'] = 'gsi3sk';
    Object.assign(values, { ':from': from, ':to': `${clientId}#\uffff` });
    condition += ' AND #sk BETWEEN :from AND :to';
    all.push({ expression: '#clientId = :clientId', names: { '#clientId': 'clientId' }, values: { ':clientId': clientId } });
  } else if (from !== undefined) {
    names['#sk'] = 'gsi3sk';
    values[':from'] = from;
    condition += ' AND #sk > :from';
  }
  for (const filter of all) {
    Object.assign(names, filter.names);
    Object.assign(values, filter.values);
  }
  const input = {
    TableName: tableName,
    IndexName: 'gsi3',
    KeyConditionExpression: condition,
    ...(all.length === 0 ? {} : { FilterExpression: all.map((filter) => filter.expression).join(' AND ') }),
    ExpressionAttributeNames: names,
  };
  const sources: Source[] = keys.settlementPartitions(partnerId).map((partition) => ({ partition, buffer: [], startKey: undefined, done: false }));
  const read = async (source: Source, size: number) => {
    const page = await documentClient.send(new QueryCommand({ ...input, ExpressionAttributeValues: { ...values, ':pk': source.partition }, Limit: size, ExclusiveStartKey: source.startKey }));
    // BETWEEN takes its bounds: the entry a page ended on is not read again.
    source.buffer.push(...(page.Items ?? []).filter((item) => options.after === undefined || String(item.gsi3sk) > options.after));
    source.startKey = page.LastEvaluatedKey;
    source.done = source.startKey === undefined;
  };
  await inPool(sources, SHARD_CONCURRENCY, (source) => read(source, options.firstReadSize ?? options.readSize ?? DEFAULT_READ_SIZE));
  // An entry moved by the backfill from the partition before the shards to its shard while both were read: once.
  const seen = new Set<string>();
  let open = sources;
  for (;;) {
    const empty = open.filter((source) => source.buffer.length === 0 && !source.done);
    if (empty.length > 0) {
      if (options.stop?.() === true) return;
      await inPool(empty, SHARD_CONCURRENCY, (source) => read(source, options.readSize ?? DEFAULT_READ_SIZE));
      continue;
    }
    open = open.filter((source) => source.buffer.length > 0);
    if (open.length === 0) return;
    let next = open[0] as Source;
    for (const source of open) if (String(source.buffer[0]?.gsi3sk) < String(next.buffer[0]?.gsi3sk)) next = source;
    const item = next.buffer.shift() as Record<string, unknown>;
    const id = itemId(item);
    if (seen.has(id)) continue;
    seen.add(id);
    yield item;
  }
}

/** Items a Query evaluates per read of a partition (before the filter drops today's): a fixed size, so a cut-off never means tiny reads. */
const DEFAULT_READ_SIZE = 1_000;

/**
 * The waiting entries one run reads per partner: five full batches (decisions.md §7: 10,000 lines each), more than
 * one HTTP run builds in its time, within a scheduled run's 15 minutes; about 50 MB in memory at most. One more than
 * five batches' worth: a read cut inside a payment drops that payment (its entries are read again whole), which
 * leaves five full batches.
 */
const MAX_WAITING_ENTRIES = 5 * MAX_LINES_PER_BATCH + 1;
/** Reading stops with this much of the request's time left, so the run keeps time to write what it read. */
const READ_RESERVE_MS = 10_000;

/**
 * Everything of one partner waiting for settlement (optionally one client's): the ledger entries (sales and
 * reversals) of payments created before `cutoff`; with no cutoff, everything waiting (the balances). Legacy
 * adjustments wait whatever the cutoff (their payment was settled before them). A Query on the sparse index: its
 * cost grows with what waits, not with the table's history; a payment's entries sort beside its sale.
 *
 * A group cut by the limit is left out whole; the only group read is kept to its last whole payment. At most
 * `maxEntries` are taken, and reading stops {@link READ_RESERVE_MS} before the request's deadline: a run
 * over a larger backlog settles the first part (oldest payments first within each client and currency) and leaves
 * the rest for the next run, instead of spending its time budget, and its memory, on reading.
 */
export async function listWaiting(
  partnerId: string,
  clientId: string | undefined,
  cutoff: string | undefined,
  maxEntries = MAX_WAITING_ENTRIES,
): Promise<WaitingRead> {
  const filters: WaitingFilter[] = [];
  if (cutoff !== undefined) {
    filters.push({
      expression: '((#entity = :transaction AND #createdAt < :cutoff) OR (#entity = :entry AND #txCreatedAt < :cutoff) OR #entity = :adjustment)',
      names: { '#entity': 'entity', '#createdAt': 'createdAt', '#txCreatedAt': 'txCreatedAt' },
      values: { ':transaction': 'transaction', ':entry': 'ledgerEntry', ':adjustment': 'settlementAdjustment', ':cutoff': cutoff },
    });
  }
  const items: SettlementItem[] = [];
  const withoutFees: string[] = [];
  let stopped = false;
  const stop = () => (stopped = (timeLeftMs() ?? Number.POSITIVE_INFINITY) <= READ_RESERVE_MS);
  let cut = false;
  for await (const raw of waitingEntries(partnerId, clientId, filters, { stop })) {
    const item = toWaitingItem(raw);
    if (item === undefined) withoutFees.push(raw.svcTxId as string);
    else if (items.length < maxEntries) items.push(item);
    else {
      cut = true;
      break;
    }
  }
  const more = cut || stopped;
  return { ...(more ? withoutLastGroup(items) : { items, partialGroup: undefined }), withoutFees, more };
}

/**
 * The items read, less the group the reading stopped in: a group's entries sum to what it is paid or owes, so a
 * part of one could look owing, or pay sales before the reversals that follow them. The next run reads it whole.
 * But one group larger than a read: its oldest payments, named `partialGroup`.
 */
function withoutLastGroup(items: SettlementItem[]): Pick<WaitingRead, 'items' | 'partialGroup'> {
  const last = items.at(-1);
  if (last === undefined) return { items, partialGroup: undefined };
  const whole = items.filter((item) => item.clientId !== last.clientId || item.currency !== last.currency);
  if (whole.length > 0) return { items: whole, partialGroup: undefined };
  // Its oldest payments, each with all of its entries (a payment's entries sort together, and the last one read may
  // go on past the cut). What follows waits for the next run.
  return { items: items.filter((item) => item.svcTxId !== last.svcTxId), partialGroup: { clientId: last.clientId, currency: last.currency } };
}

