/**
 * What waits for settlement, summed per merchant and currency (decisions.md §5a, `GET /balances`): the sparse
 * settlement index of one partner, read in key order, each (client, currency) group summed as it passes. The same
 * entries a settlement run reads, so a balance and the next run never disagree on an amount.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { currencyCode } from '../domain/money';
import type { BalanceFilters, WaitingBalance } from '../use-cases/balances';
import { documentClient } from './dynamo';
import { keys } from './keys';
import { toEntry } from './ledger-entries';
import { openListCursor, type Page, sealListCursor } from './paging';
import { waitingQuery } from './settlement-waiting';

/** The key attributes a balances cursor carries: the last index item of the page's last group. */
const CURSOR_KEYS = ['pk', 'sk', 'gsi3sk'];
const READ_SIZE = 1_000;
/** Index items one page reads at most before it answers (it finishes the group it is in). */
const MAX_ITEMS_READ = 20_000;

/** One partner's waiting balances, by client then currency, paged by group (`limit` groups at most). */
export async function listBalances(partnerId: string, query: BalanceFilters): Promise<Page<WaitingBalance>> {
  const scope = JSON.stringify(['balances/v1', partnerId, query.clientId ?? null, query.currency ?? null, query.owingOnly === true]);
  const currency = query.currency === undefined ? [] : [{ expression: '#currency = :currency', names: { '#currency': 'currency' }, values: { ':currency': query.currency } }];
  const input = waitingQuery(partnerId, query.clientId, currency);
  let startKey: Record<string, unknown> | undefined =
    query.cursor === undefined ? undefined : { gsi3pk: keys.settlementPartition(partnerId), ...(await openListCursor(scope, query.cursor, CURSOR_KEYS)) };

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
  read: do {
    const page = await documentClient.send(new QueryCommand({ ...input, Limit: READ_SIZE, ExclusiveStartKey: startKey }));
    startKey = page.LastEvaluatedKey;
    for (const raw of page.Items ?? []) {
      itemsRead++;
      const entry = toEntry(raw);
      // A succeeded transaction without its split is paid nothing (settlement reports it): it adds nothing here.
      if (entry === undefined) continue;
      if (current === undefined || current.balance.clientId !== entry.clientId || current.balance.currency !== entry.currency) {
        close();
        if (more) break read;
        if (itemsRead > MAX_ITEMS_READ && lastClosed !== undefined) {
          bounded = true;
          break read;
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
  } while (startKey !== undefined);
  close();
  const lastGroup = groups.at(-1);
  const resumeAfter = more ? lastGroup?.last : bounded ? lastClosed : undefined;
  return {
    items: groups.map((group) => group.balance),
    nextCursor: resumeAfter === undefined ? null : await sealListCursor(scope, CURSOR_KEYS.map((name) => String(resumeAfter[name]))),
  };
}
