/** Paging over a Query (lib/store/paging.ts) against DynamoDB Local: bounded reads, sealed cursors tied to the query. */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { ServiceError } from '../../../lib/domain/errors';
import { documentClient, tableName } from '../../../lib/store/dynamo';
import { queryPage } from '../../../lib/store/paging';

const partition = `PAGING-TEST#${randomUUID()}`;
const ITEMS = 1_250;

beforeAll(async () => {
  // Arrange: 1,250 items in one gsi1 partition; every 500th is "rare"
  const items = Array.from({ length: ITEMS }, (_, i) => {
    const createdAt = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
    return { pk: `PAGING#${i}`, sk: 'ITEM', gsi1pk: partition, gsi1sk: `${createdAt}#${i}`, n: i, kind: i % 500 === 0 ? 'rare' : 'common' };
  });
  for (let i = 0; i < items.length; i += 25) {
    await documentClient.send(
      new BatchWriteCommand({ RequestItems: { [tableName]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) } }),
    );
  }
}, 60_000);

const page = (options: { limit: number; cursor?: string; rare?: boolean; from?: string }) =>
  queryPage({
    index: 'gsi1',
    partition,
    limit: options.limit,
    cursor: options.cursor,
    sortFrom: options.from,
    filter: options.rare ? { expression: '#kind = :kind', names: { '#kind': 'kind' }, values: { ':kind': 'rare' } } : undefined,
    toItem: (item) => item.n as number,
  });

describe('queryPage', () => {
  it('visits every item exactly once, newest first, with next_cursor null only on the last page', async () => {
    const seen: number[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const result = await page({ limit: 200, cursor });
      seen.push(...result.items);
      cursor = result.nextCursor ?? undefined;
      pages++;
    } while (cursor !== undefined);

    expect(pages).toBe(7);
    expect(seen).toEqual(Array.from({ length: ITEMS }, (_, i) => ITEMS - 1 - i));
  });

  it('bounds the reads of a rare filter: a short page and a cursor, until every match is found', async () => {
    const found: number[] = [];
    const pageSizes: number[] = [];
    let cursor: string | undefined;
    do {
      const result = await page({ limit: 50, cursor, rare: true });
      found.push(...result.items);
      pageSizes.push(result.items.length);
      cursor = result.nextCursor ?? undefined;
    } while (cursor !== undefined);

    expect(found).toEqual([1000, 500, 0]);
    expect(pageSizes.length).toBeGreaterThan(1);
  });

  it('refuses a cursor outside the query range, or of another list, with 400 VALIDATION_ERROR', async () => {
    const first = await page({ limit: 10 });

    const outOfRange = page({ limit: 10, cursor: first.nextCursor ?? '', from: '2099-01-01T00:00:00.000Z' });
    const otherList = queryPage({ index: 'gsi1', partition: `${partition}-other`, limit: 10, cursor: first.nextCursor ?? '', toItem: (item) => item });

    await expect(outOfRange).rejects.toBeInstanceOf(ServiceError);
    await expect(outOfRange).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await expect(otherList).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
  });
});

describe('sealed cursors', () => {
  /** A forged cursor: base64url JSON of the last item's keys, as a client might guess one (never what the service hands out). */
  const forge = (key: Record<string, string>) => Buffer.from(JSON.stringify(key), 'utf8').toString('base64url');
  const lastKeyOf = (n: number) => {
    const createdAt = new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString();
    return { pk: `PAGING#${n}`, sk: 'ITEM', gsi1pk: partition, gsi1sk: `${createdAt}#${n}` };
  };

  /** Refused as the caller's mistake (400 on `cursor`), before DynamoDB sees anything. */
  async function expectRefused(attempt: Promise<unknown>) {
    const error = await attempt.then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({ status: 400, code: 'VALIDATION_ERROR', details: { fieldErrors: { cursor: [expect.any(String)] } } });
  }

  it('continues the list with the cursor it issued', async () => {
    const first = await page({ limit: 10 });

    const second = await page({ limit: 10, cursor: first.nextCursor ?? '' });

    expect(second.items).toEqual(Array.from({ length: 10 }, (_, i) => ITEMS - 11 - i));
  });

  it('refuses a cursor altered at any one character', async () => {
    const cursor = (await page({ limit: 10 })).nextCursor ?? '';

    for (let i = 0; i < cursor.length; i++) {
      const altered = `${cursor.slice(0, i)}${cursor[i] === 'A' ? 'B' : 'A'}${cursor.slice(i + 1)}`;
      await expectRefused(page({ limit: 10, cursor: altered }));
    }
  });

  it('refuses a cursor made outside the service, even one naming a real item of this list', async () => {
    await expectRefused(page({ limit: 10, cursor: forge(lastKeyOf(700)) }));
  });

  it('refuses multi-byte and oversized key values without sending them to DynamoDB', async () => {
    const multiByte = { ...lastKeyOf(700), gsi1sk: '€'.repeat(400) };
    const oversized = { ...lastKeyOf(700), pk: `PAGING#${'9'.repeat(2100)}` };

    await expectRefused(page({ limit: 10, cursor: forge(multiByte) }));
    await expectRefused(page({ limit: 10, cursor: forge(oversized) }));
    await expectRefused(page({ limit: 10, cursor: 'é'.repeat(100) }));
    await expectRefused(page({ limit: 10, cursor: 'A'.repeat(2049) }));
  });

  it('refuses a cursor of the same list under another filter', async () => {
    const rare = await page({ limit: 1, rare: true });
    const common = await page({ limit: 10 });

    await expectRefused(page({ limit: 10, cursor: rare.nextCursor ?? '' }));
    await expectRefused(page({ limit: 10, cursor: common.nextCursor ?? '', rare: true }));
  });
});
