/**
 * The lists kept over shards (lib/store/paging.ts `queryShardedPage`, decisions.md §9 and §11), against DynamoDB Local:
 * a partner's transactions are spread over 32 shards of gsi5 and every partner's over 128 of gsi6 (deliveries and audit
 * events likewise), and a list merges them newest first, with sealed cursors that carry one position for every shard.
 * Items written before the shards (on gsi1/gsi2) are listed with them.
 */
import { beforeAll, describe, expect, it, jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { BatchWriteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ServiceError } from '../../../lib/domain/errors';
import type { Transaction, TransactionFilters, TransactionStatus } from '../../../lib/domain/transaction';
import { listAuditEvents, recordAuditEvent } from '../../../lib/store/audit-events';
import { documentClient, tableName } from '../../../lib/store/dynamo';
import { keys, TRANSACTION_LIST_SHARDS } from '../../../lib/store/keys';
import { queryShardedPage } from '../../../lib/store/paging';
import { listTransactions, transactionItem } from '../../../lib/store/transactions';
import { transactionFixture } from '../../support/transactions';

// Each page reads every shard: on a loaded machine a test of many pages takes longer than jest's 5 s default.
jest.setTimeout(30_000);

const run = randomUUID().slice(0, 8);
const partnerId = `p_shard_${run}`;
const clientId = `shard-merchant-${run}`;
const COUNT = 90;

/** A transaction created `second` seconds into 2026-03-01, its `svc_tx_id` unique to this run. */
function transaction(second: number, status: TransactionStatus = 'succeeded', client = clientId): Transaction {
  return transactionFixture({
    svcTxId: `svc_tx_${run}${String(second).padStart(16, '0')}`,
    partnerId,
    clientId: client,
    partnerReference: `ref-${run}-${second}`,
    amountMinor: 1000 + second,
    status,
    createdAt: new Date(Date.UTC(2026, 2, 1) + second * 1000).toISOString(),
  });
}

async function write(transactions: Transaction[]): Promise<void> {
  for (let i = 0; i < transactions.length; i += 25) {
    await documentClient.send(
      new BatchWriteCommand({ RequestItems: { [tableName]: transactions.slice(i, i + 25).map((tx) => ({ PutRequest: { Item: transactionItem(tx) } })) } }),
    );
  }
}

/** Every page of a list, `limit` at a time, with what is done between pages. */
async function allPages(partner: string | undefined, filters: TransactionFilters, limit: number, between?: (page: number) => Promise<void>) {
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let page = 1; ; page++) {
    const result = await listTransactions(partner, filters, { limit, cursor });
    seen.push(...result.items.map((tx) => tx.svcTxId));
    if (result.nextCursor === null) return seen;
    cursor = result.nextCursor;
    await between?.(page);
  }
}

const written = Array.from({ length: COUNT }, (_, i) => transaction(i, i % 9 === 0 ? 'pending' : 'succeeded'));
const newestFirst = (transactions: Transaction[]) => [...transactions].sort((a, b) => b.createdAt.localeCompare(a.createdAt)).map((tx) => tx.svcTxId);

beforeAll(async () => {
  await write(written);
}, 60_000);

describe('a partner’s transactions over 32 shards', () => {
  it('spreads them over the shards, on gsi5 and gsi6, and none on the partitions before the shards', () => {
    const items = written.map(transactionItem);
    expect(new Set(items.map((item) => item.gsi5pk)).size).toBeGreaterThanOrEqual(20);
    expect(new Set(items.map((item) => item.gsi6pk)).size).toBeGreaterThanOrEqual(30);
    expect(items.every((item) => String(item.gsi5pk).startsWith(`TXS#${partnerId}#`) && String(item.gsi6pk).match(/^TXS#\d{3}$/) !== null)).toBe(true);
    expect(items.some((item) => 'gsi1pk' in item || 'gsi2pk' in item)).toBe(false);
    expect(TRANSACTION_LIST_SHARDS).toEqual({ partner: 32, platform: 128 });
  });

  it('pages through all of them newest first, each once, across shard boundaries', async () => {
    for (const limit of [2, 7, 50, 200]) expect(await allPages(partnerId, {}, limit)).toEqual(newestFirst(written));
  }, 30_000);

  it('filters across shards: status, client, a reference, a creation range', async () => {
    expect(await allPages(partnerId, { status: 'pending' }, 4)).toEqual(newestFirst(written.filter((tx) => tx.status === 'pending')));
    expect(await allPages(partnerId, { partnerReference: `ref-${run}-41` }, 10)).toEqual([written[41]!.svcTxId]);
    const from = written[20]!.createdAt;
    const to = written[29]!.createdAt;
    expect(await allPages(partnerId, { createdFrom: from, createdTo: to }, 3)).toEqual(newestFirst(written.slice(20, 30)));
  });

  it('never repeats or skips an item while transactions are written between pages', async () => {
    // Arrange: a partner of its own, paged 5 at a time; after each page, 3 new transactions (newer than all)
    const others = Array.from({ length: 30 }, (_, i) => ({ ...transaction(1_000 + i), partnerId: `${partnerId}-busy`, svcTxId: `svc_tx_${run}busy${String(i).padStart(12, '0')}` }));
    await write(others);
    let added = 0;
    const seen = await allPages(`${partnerId}-busy`, {}, 5, async () => {
      const fresh = Array.from({ length: 3 }, () => ({ ...transaction(5_000 + added), partnerId: `${partnerId}-busy`, svcTxId: `svc_tx_${run}late${String(added++).padStart(12, '0')}` }));
      await write(fresh);
    });
    // Assert: exactly the transactions there when the first page was read, newest first
    expect(seen).toEqual(newestFirst(others));
  });

  it('lists transactions written before the shards (gsi1/gsi2) in order among the sharded ones', async () => {
    const legacy = [transaction(10_000 + 15), transaction(10_000 + 45)].map((tx) => ({ ...tx, partnerId: `${partnerId}-mixed` }));
    const sharded = Array.from({ length: 60 }, (_, i) => ({ ...transaction(10_000 + i), partnerId: `${partnerId}-mixed` })).filter((tx) => !legacy.some((old) => old.svcTxId === tx.svcTxId));
    await write(sharded);
    for (const tx of legacy) {
      const { gsi5pk, gsi5sk, gsi6pk, gsi6sk, ...item } = transactionItem(tx) as Record<string, unknown>;
      const sort = `${tx.createdAt}#${tx.svcTxId}`;
      await documentClient.send(new PutCommand({ TableName: tableName, Item: { ...item, gsi1pk: keys.transactionsOf(tx.partnerId), gsi1sk: sort, gsi2pk: keys.allTransactions, gsi2sk: sort } }));
    }
    expect(await allPages(`${partnerId}-mixed`, {}, 6)).toEqual(newestFirst([...sharded, ...legacy]));
    // and in the platform's list, narrowed to them
    expect(await allPages(undefined, { clientId, createdFrom: legacy[0]!.createdAt, createdTo: legacy[1]!.createdAt }, 8)).toEqual(
      newestFirst([...sharded, ...legacy].filter((tx) => tx.createdAt >= legacy[0]!.createdAt && tx.createdAt <= legacy[1]!.createdAt)),
    );
  });
});

describe('every partner’s transactions over 128 shards', () => {
  it('pages through one merchant’s newest first, each once', async () => {
    // (the other tests' transactions share the merchant but not the first 90 seconds)
    expect(await allPages(undefined, { clientId, createdFrom: written[0]!.createdAt, createdTo: written.at(-1)!.createdAt }, 13)).toEqual(newestFirst(written));
  });
});

describe('a list whose items sit in a few of its shards', () => {
  it('still fills a page to its limit: a source read again asks for all the page lacks', async () => {
    // Arrange: 64 shards, 3 of them with 70 items each (one payment's deliveries share a shard)
    const partition = (shard: number) => `SHARD-CLUSTER#${run}#${shard}`;
    const items = [5, 23, 50].flatMap((shard) =>
      Array.from({ length: 70 }, (_, i) => ({ pk: `SHARD-CLUSTER#${run}#${shard}-${i}`, sk: 'ITEM', gsi5pk: partition(shard), gsi5sk: `${new Date(Date.UTC(2026, 2, 2) + (i * 64 + shard) * 1000).toISOString()}#${shard}-${i}`, n: i })),
    );
    for (let i = 0; i < items.length; i += 25) {
      await documentClient.send(new BatchWriteCommand({ RequestItems: { [tableName]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) } }));
    }
    const page = await queryShardedPage({
      list: `shard-cluster/${run}`,
      sources: Array.from({ length: 64 }, (_, shard) => ({ index: 'gsi5' as const, partition: partition(shard) })),
      limit: 200,
      toItem: (item) => String(item.pk),
    });
    expect(page.items).toHaveLength(200);
    expect(page.nextCursor).not.toBeNull();
  });
});

describe('sharded cursors', () => {
  it('refuse a cursor altered, or from another list or filter: 400 VALIDATION_ERROR', async () => {
    const first = await listTransactions(partnerId, {}, { limit: 5 });
    const cursor = first.nextCursor!;
    const refusals = [
      listTransactions(partnerId, {}, { limit: 5, cursor: `${cursor.slice(0, -2)}${cursor.endsWith('A') ? 'BB' : 'AA'}` }),
      listTransactions(`${partnerId}-busy`, {}, { limit: 5, cursor }),
      listTransactions(undefined, {}, { limit: 5, cursor }),
      listTransactions(partnerId, { status: 'pending' }, { limit: 5, cursor }),
    ];
    for (const refusal of refusals) {
      await expect(refusal).rejects.toBeInstanceOf(ServiceError);
      await expect(refusal).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    }
  });
});

/** Writes `items`, then every page of the "rare" items of shards `a` and `b` of `partition`, 10 a page (at most 20 pages). */
async function rarePages(items: Array<Record<string, unknown>>, list: string, partition: (name: string) => string): Promise<string[][]> {
  for (let i = 0; i < items.length; i += 25) {
    await documentClient.send(new BatchWriteCommand({ RequestItems: { [tableName]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) } }));
  }
  const pages: string[][] = [];
  let cursor: string | undefined;
  do {
    const result = await queryShardedPage({
      list,
      sources: [
        { index: 'gsi5', partition: partition('a') },
        { index: 'gsi5', partition: partition('b') },
      ],
      filter: { expression: '#status = :rare', names: { '#status': 'status' }, values: { ':rare': 'rare' } },
      limit: 10,
      cursor,
      toItem: (item) => item.n as string,
    });
    pages.push(result.items);
    cursor = result.nextCursor ?? undefined;
  } while (cursor !== undefined && pages.length < 20);
  return pages;
}

describe('a selective filter over shards', () => {
  it('never skips a match in a source that still had items in hand when the reading stopped', async () => {
    // Arrange: shard A's first read holds a match (its newest item) and stops there; shard B has none and is read
    // deeper until the reads run out. A's unread items, older than its first read, hold a second match
    const partition = (name: string) => `SHARD-HELD#${run}#${name}`;
    const at = (i: number) => new Date(Date.UTC(2026, 1, 1) + i * 1000).toISOString();
    const a = Array.from({ length: 300 }, (_, i) => ({ pk: `SHARD-HELD#${run}#a${i}`, sk: 'ITEM', gsi5pk: partition('a'), gsi5sk: `${at(10_000 - i)}#a${i}`, status: i === 0 || i === 250 ? 'rare' : 'common', n: `a${i}` }));
    const b = Array.from({ length: 2_000 }, (_, i) => ({ pk: `SHARD-HELD#${run}#b${i}`, sk: 'ITEM', gsi5pk: partition('b'), gsi5sk: `${at(10_000 - i)}#b${i}`, status: 'common', n: `b${i}` }));
    const found = (await rarePages([...a, ...b], `shard-held/${run}`, partition)).flat();
    expect(found).toEqual(['a0', 'a250']);
  }, 60_000);

  it('stops reading at its bound, answers a short page of every match newer than where it stopped, and goes on from there', async () => {
    // Arrange: two shards of 1,100 items each, one item of the 2,200 "rare" (the oldest of shard A); reads of 100 a
    // time, one of each shard and 10 more a page, so the first pages stop before they reach it
    const partition = (name: string) => `SHARD-TEST#${run}#${name}`;
    const items = ['a', 'b'].flatMap((shard, s) =>
      Array.from({ length: 1_100 }, (_, i) => {
        const createdAt = new Date(Date.UTC(2026, 0, 1) + (i * 2 + s) * 1000).toISOString();
        return { pk: `SHARD-ITEM#${run}#${shard}${i}`, sk: 'ITEM', gsi5pk: partition(shard), gsi5sk: `${createdAt}#${shard}${i}`, status: shard === 'a' && i === 0 ? 'rare' : 'common', n: `${shard}${i}` };
      }),
    );
    // Act: follow the cursors
    const pages = await rarePages(items, `shard-test/${run}`, partition);

    // Assert: short (empty) pages with a cursor until the match, then the match, then the end
    expect(pages.length).toBeGreaterThan(1);
    expect(pages.slice(0, -1).every((items) => items.length === 0)).toBe(true);
    expect(pages.at(-1)).toEqual(['a0']);
  }, 60_000);
});

describe('the deliveries and audit lists over their shards', () => {
  it('spread deliveries over 64 shards of a partner, audit events over 32 of a partner and 128 of the platform', () => {
    const ids = Array.from({ length: 400 }, () => randomUUID());
    // a partner's deliveries spread by their payments, every delivery of one payment in its one shard
    expect(new Set(ids.map((id) => keys.webhookDeliveryIndex('p_1', `svc_tx_${id}`, randomUUID(), '2026-01-01T00:00:00.000Z').gsi5pk)).size).toBeGreaterThan(50);
    expect(new Set(ids.map(() => keys.webhookDeliveryIndex('p_1', 'svc_tx_one', randomUUID(), '2026-01-01T00:00:00.000Z').gsi5pk)).size).toBe(1);
    expect(new Set(ids.map((id) => keys.auditEventIndex('p_1', id, '2026-01-01T00:00:00.000Z').gsi5pk)).size).toBeGreaterThan(25);
    expect(new Set(ids.map((id) => keys.auditEventIndex('p_1', id, '2026-01-01T00:00:00.000Z').gsi6pk)).size).toBeGreaterThan(100);
    // an event of no partner's: the platform's list only
    expect(Object.keys(keys.auditEventIndex(undefined, ids[0]!, '2026-01-01T00:00:00.000Z')).sort()).toEqual(['gsi6pk', 'gsi6sk']);
  });

  it('list audit events written before the shards (gsi1/gsi2) among the sharded ones, newest first', async () => {
    const partner = `${partnerId}-audit`;
    const event = (second: number) => ({
      id: `audit-${run}-${second}`,
      type: 'partner.updated' as const,
      partnerId: partner,
      resourceType: 'partner' as const,
      resourceId: partner,
      details: {},
      createdAt: new Date(Date.UTC(2026, 4, 1) + second * 1000).toISOString(),
    });
    const sharded = Array.from({ length: 12 }, (_, i) => event(i)).filter((_, i) => i !== 4);
    for (const audit of sharded) await recordAuditEvent(audit);
    const old = event(4);
    const sort = `${old.createdAt}#${old.id}`;
    await documentClient.send(
      new PutCommand({ TableName: tableName, Item: { ...keys.auditEvent(old.id), gsi1pk: keys.auditEventsOf(partner), gsi1sk: sort, gsi2pk: keys.allAuditEvents, gsi2sk: sort, entity: 'auditEvent', ...old } }),
    );
    const listed: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await listAuditEvents({ partnerId: partner, limit: 5, cursor });
      listed.push(...page.items.map((audit) => audit.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    expect(listed).toEqual(Array.from({ length: 12 }, (_, i) => event(11 - i).id));
  });
});
