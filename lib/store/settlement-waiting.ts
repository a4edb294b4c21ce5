/**
 * What waits for settlement (docs/data-model.md: the sparse settlement index `SETTLE#<partner_id>`): the ledger
 * entries of one partner, read oldest payment first, each payment's entries beside its sale. A settlement run reads
 * them to plan its batches (`listWaiting`), the balances sum them (`lib/store/balances.ts`), both through one Query
 * shape (`waitingQuery`).
 */
import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { MAX_LINES_PER_BATCH, type SettlementItem } from '../domain/settlement';
import { timeLeftMs } from '../deadline';
import type { WaitingRead } from '../use-cases/ports/settlement-store';
import { documentClient, tableName } from './dynamo';
import { keys } from './keys';
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

/**
 * The Query of one partner's settlement index (`SETTLE#<partner_id>`, oldest payment first), optionally one
 * client's (a key prefix, and the client id itself as a filter: the prefix alone would also match a client whose id
 * continues past a '#'), with `filters` ANDed: what a settlement run and the balances both read.
 */
export function waitingQuery(partnerId: string, clientId: string | undefined, filters: WaitingFilter[] = []): QueryCommandInput {
  const all = [...filters];
  let condition = '#pk = :pk';
  const names: Record<string, string> = { '#pk': 'gsi3pk' };
  const values: Record<string, unknown> = { ':pk': keys.settlementPartition(partnerId) };
  if (clientId !== undefined) {
    condition += ' AND begins_with(#sk, :clientPrefix)';
    Object.assign(names, { '#sk': 'gsi3sk' });
    Object.assign(values, { ':clientPrefix': `${clientId}#` });
    all.push({ expression: '#clientId = :clientId', names: { '#clientId': 'clientId' }, values: { ':clientId': clientId } });
  }
  for (const filter of all) {
    Object.assign(names, filter.names);
    Object.assign(values, filter.values);
  }
  return {
    TableName: tableName,
    IndexName: 'gsi3',
    KeyConditionExpression: condition,
    ...(all.length === 0 ? {} : { FilterExpression: all.map((filter) => filter.expression).join(' AND ') }),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

/**
 * The waiting entries one run reads per partner: five full batches (decisions.md §7: 10,000 lines each), more than
 * one HTTP run builds in its time, within a scheduled run's 15 minutes; about 50 MB in memory at most. One more than
 * five batches' worth: a read cut inside a payment drops that payment (its entries are read again whole), which
 * leaves five full batches.
 */
const MAX_WAITING_ENTRIES = 5 * MAX_LINES_PER_BATCH + 1;
/** Items a Query evaluates per page (before the filter drops today's): a fixed size, so a cut-off never means tiny pages. */
const PAGE_SIZE = 1_000;
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
  const input = waitingQuery(partnerId, clientId, filters);
  const items: SettlementItem[] = [];
  const withoutFees: string[] = [];
  let startKey: Record<string, unknown> | undefined;
  let cut = false;
  read: do {
    const page = await documentClient.send(new QueryCommand({ ...input, ExclusiveStartKey: startKey, Limit: PAGE_SIZE }));
    startKey = page.LastEvaluatedKey;
    for (const raw of page.Items ?? []) {
      const item = toWaitingItem(raw);
      if (item === undefined) withoutFees.push(raw.svcTxId as string);
      else if (items.length < maxEntries) items.push(item);
      else {
        cut = true;
        break read;
      }
    }
  } while (startKey !== undefined && (timeLeftMs() ?? Number.POSITIVE_INFINITY) > READ_RESERVE_MS);
  const more = cut || startKey !== undefined;
  return { items: more ? withoutLastGroup(items) : items, withoutFees, more };
}

/**
 * The items read, less the group the reading stopped in: a group's entries sum to what it is paid or owes, so a
 * part of one could look owing, or pay sales before the reversals that follow them. The next run reads it whole.
 */
function withoutLastGroup(items: SettlementItem[]): SettlementItem[] {
  const last = items.at(-1);
  if (last === undefined) return items;
  const whole = items.filter((item) => item.clientId !== last.clientId || item.currency !== last.currency);
  if (whole.length > 0) return whole;
  // One group larger than a run reads: its oldest payments, each with all of its entries (a payment's entries sort
  // together, and the last one read may go on past the cut). What follows waits for the next run.
  return items.filter((item) => item.svcTxId !== last.svcTxId);
}

