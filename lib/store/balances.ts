/**
 * What waits for settlement, summed per merchant and currency (decisions.md §5a, `GET /balances`): the sparse
 * settlement index of one partner, read in key order, each (client, currency) group summed as it passes. The same
 * entries a settlement run reads, so a balance and the next run never disagree on an amount.
 */
import { currencyCode } from '../domain/money';
import type { BalanceFilters, WaitingBalance } from '../use-cases/balances';
import type { GroupKey } from '../use-cases/ports/settlement-store';
import { tableName } from './dynamo';
import { itemId, keys } from './keys';
import { toEntry } from './ledger-entries';
import { openListCursor, type Page, sealListCursor } from './paging';
import { waitingEntries } from './settlement-waiting';
import { listBuilds } from './settlements';
import { queryAll } from './query-all';

/** The key attributes a balances cursor carries: the last index item of the page's last group. */
const CURSOR_KEYS = ['pk', 'sk', 'gsi3sk'];
/** Items each shard's first Query evaluates (a page of a few groups), then each later one. */
const FIRST_READ_SIZE = 50;
const READ_SIZE = 1_000;
/** Index items one page reads at most before it answers (it finishes the group it is in). */
const MAX_ITEMS_READ = 20_000;

/** The lines that the partner's builds in progress (or discarded, not yet released) hold reserved, of those `wanted`. */
async function reservedLines(partnerId: string, wanted: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>[]> {
  const reserved: Record<string, unknown>[] = [];
  for (const build of await listBuilds(partnerId)) {
    const lines = await queryAll({
      TableName: tableName,
      IndexName: 'gsi3',
      KeyConditionExpression: 'gsi3pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.settlementBuildPartition(build.id) },
    });
    reserved.push(...lines.filter(wanted));
  }
  return reserved;
}

const currencyFilter = (currency: string | undefined) => (currency === undefined ? [] : [{ expression: '#currency = :currency', names: { '#currency': 'currency' }, values: { ':currency': currency } }]);

/**
 * What waits, in the settlement index's order after `after`: the waiting entries (every shard, merged), merged with the
 * lines that builds in progress (or discarded, not yet released) have reserved, which wait until their batch is
 * committed (docs/settlement.md). Builds are rare and short, so their lines are read whole. An entry a discard moved
 * back between the two reads is yielded once.
 */
async function* waitingItems(partnerId: string, clientId: string | undefined, currency: string | undefined, after: string | undefined): AsyncGenerator<Record<string, unknown>> {
  const wanted = (line: Record<string, unknown>) =>
    (after === undefined || String(line.gsi3sk) > after) && (clientId === undefined || line.clientId === clientId) && (currency === undefined || line.currency === currency);
  const reserved = (await reservedLines(partnerId, wanted)).sort((a, b) => (String(a.gsi3sk) < String(b.gsi3sk) ? -1 : 1));
  const yielded = new Set<string>();
  const once = (raw: Record<string, unknown>) => {
    const id = itemId(raw);
    if (yielded.has(id)) return false;
    yielded.add(id);
    return true;
  };
  let next = 0;
  for await (const raw of waitingEntries(partnerId, clientId, currencyFilter(currency), { after, firstReadSize: FIRST_READ_SIZE, readSize: READ_SIZE })) {
    while (next < reserved.length && String(reserved[next]?.gsi3sk) < String(raw.gsi3sk)) {
      const line = reserved[next++] as Record<string, unknown>;
      if (once(line)) yield line;
    }
    if (once(raw)) yield raw;
  }
  for (const line of reserved.slice(next)) if (once(line)) yield line;
}

/** One partner's waiting balances, by client then currency, paged by group (`limit` groups at most). */
export async function listBalances(partnerId: string, query: BalanceFilters): Promise<Page<WaitingBalance>> {
  const scope = JSON.stringify(['balances/v1', partnerId, query.clientId ?? null, query.currency ?? null, query.owingOnly === true]);
  // The cursor's sort key is where every shard continues (its table key is kept for cursors handed out before the shards).
  const after = query.cursor === undefined ? undefined : (await openListCursor(scope, query.cursor, CURSOR_KEYS)).gsi3sk;

  type Group = { balance: WaitingBalance; last: Record<string, unknown> };
  const groups: Group[] = [];
  let current: Group | undefined;
  // Set once a wanted group is found past a full page: only then is there a next page (never an empty one).
  let more = false;
  // A page reads at most about MAX_ITEMS_READ index items (whole groups): past it, it answers the groups it has with
  // a cursor after the last group it read (`owing=true` over a partner that owes nothing would otherwise read all).
  let itemsRead = 0;
  let lastClosed: Record<string, unknown> | undefined;
  let bounded = false;
  const wanted = (group: Group) => query.owingOnly !== true || group.balance.debitsMinor > group.balance.creditsMinor;
  const close = () => {
    if (current !== undefined && wanted(current)) {
      if (groups.length < query.limit) groups.push(current);
      else more = true;
    }
    if (current !== undefined && !more) lastClosed = current.last;
    current = undefined;
  };
  for await (const raw of waitingItems(partnerId, query.clientId, query.currency, after)) {
    itemsRead++;
    const entry = toEntry(raw);
    // A succeeded transaction without its split is paid nothing (settlement reports it): it adds nothing here.
    if (entry === undefined) continue;
    if (current === undefined || current.balance.clientId !== entry.clientId || current.balance.currency !== entry.currency) {
      close();
      if (more) break;
      if (itemsRead > MAX_ITEMS_READ && lastClosed !== undefined) {
        bounded = true;
        break;
      }
      current = { balance: { clientId: entry.clientId, currency: currencyCode(entry.currency), creditsMinor: 0, debitsMinor: 0, owingSince: null }, last: raw };
    }
    // By type (decisions.md §5a): sales and reinstatements pay the merchant, the rest are reversals (whose net a
    // proportional rounding may make 0 or even +1 on a tiny refund step: it still counts as a reversal).
    if (entry.type === 'transaction' || entry.type === 'dispute_reinstated') current.balance.creditsMinor += entry.netMinor;
    else {
      current.balance.debitsMinor -= entry.netMinor;
      const since = current.balance.owingSince;
      if (since === null || entry.createdAt < since) current.balance.owingSince = entry.createdAt;
    }
    current.last = raw;
  }
  close();
  const lastGroup = groups.at(-1);
  const resumeAfter = more ? lastGroup?.last : bounded ? lastClosed : undefined;
  return {
    items: groups.map((group) => group.balance),
    nextCursor: resumeAfter === undefined ? null : await sealListCursor(scope, CURSOR_KEYS.map((name) => String(resumeAfter[name]))),
  };
}

/**
 * What a merchant owes in one currency (0 when nothing): its waiting entries and the lines builds hold reserved
 * (decisions.md §5a), each counted once. The builds are read before and after the waiting entries, so a line a run
 * reserves, or a discard moves back, while this reads is seen in one of the three reads (a pay must not miss a
 * reversal in motion and pay a merchant that owes).
 */
export async function owedMinor(group: GroupKey): Promise<number> {
  const wanted = (line: Record<string, unknown>) => line.clientId === group.clientId && line.currency === group.currency;
  const entries = new Map<string, Record<string, unknown>>();
  for (const line of await reservedLines(group.partnerId, wanted)) entries.set(itemId(line), line);
  for await (const raw of waitingEntries(group.partnerId, group.clientId, currencyFilter(group.currency), { readSize: READ_SIZE })) entries.set(itemId(raw), raw);
  for (const line of await reservedLines(group.partnerId, wanted)) entries.set(itemId(line), line);
  const net = [...entries.values()].reduce((sum, raw) => sum + (toEntry(raw)?.netMinor ?? 0), 0);
  return Math.max(0, -net);
}
