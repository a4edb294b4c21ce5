/**
 * `npm run backfill:transaction-lists` (infra/scripts/backfill-transaction-lists.ts) against this run's DynamoDB Local:
 * a transaction written before the sharded lists (on gsi1 `TXS#<partner>` and gsi2 `TXS`) is moved to its shards of
 * gsi5 and gsi6 once, however often the command runs, and stays listed, in its place, before, during and after. Run
 * as an operator would, in its own process, the table and endpoint from the environment (this run's).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { TransactionListBackfillCounts } from '../../../infra/scripts/backfill-transaction-lists';
import { documentClient, tableName } from '../../../lib/store/dynamo';
import { keys } from '../../../lib/store/keys';
import { TestApi } from '../../support/api';
import { runNpmScript } from '../../support/operator-command';

const TEST_TIMEOUT_MS = 60_000;
let api: TestApi;
beforeAll(async () => {
  api = await TestApi.start();
});
afterAll(() => api.close());

const itemOf = async (svcTxId: string) =>
  (await documentClient.send(new GetCommand({ TableName: tableName, Key: keys.transaction(svcTxId), ConsistentRead: true }))).Item ?? {};

/** The transaction as written before the shards: its list keys on gsi1 and gsi2, none on gsi5 and gsi6. */
async function asBeforeTheShards(svcTxId: string) {
  const item = await itemOf(svcTxId);
  const sort = `${String(item.createdAt)}#${svcTxId}`;
  await documentClient.send(
    new UpdateCommand({
      TableName: tableName,
      Key: keys.transaction(svcTxId),
      UpdateExpression: 'SET gsi1pk = :gsi1pk, gsi1sk = :sort, gsi2pk = :gsi2pk, gsi2sk = :sort REMOVE gsi5pk, gsi5sk, gsi6pk, gsi6sk',
      ExpressionAttributeValues: { ':gsi1pk': keys.transactionsOf(String(item.partnerId)), ':gsi2pk': keys.allTransactions, ':sort': sort },
    }),
  );
}

describe('npm run backfill:transaction-lists', () => {
  it('moves the transactions on the lists before the shards to their shards once, and they stay listed in order throughout', async () => {
    // Arrange: three checkouts of one partner, the middle one as written before the shards
    const partner = await api.createPartner();
    const clientId = await api.createClient(partner);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const body = { partner_id: partner.partnerId, client_id: clientId, amount: 15, currency: 'USD', email: 'buyer@example.com', partner_reference: `order-${randomUUID()}` };
      ids.push((await api.signed(partner, '/transactions/checkout-intent', body)).body.svc_tx_id as string);
    }
    await asBeforeTheShards(ids[1]!);
    type Listed = { items: Array<{ svcTxId: string }>; next_cursor: string | null };
    const page = async (query: string) => (await api.request('GET', `/transactions?limit=2${query}`, { headers: { 'x-api-key': partner.apiKey } })).body as Listed;
    const allListed = async () => {
      const first = await page('');
      const next = await page(`&cursor=${first.next_cursor}`);
      return [...first.items, ...next.items].map((tx) => tx.svcTxId);
    };
    const newestFirst = [...ids].reverse();
    expect(await allListed()).toEqual(newestFirst);

    // Act
    const first = await runNpmScript<TransactionListBackfillCounts>('backfill:transaction-lists');
    const moved = await itemOf(ids[1]!);
    const second = await runNpmScript<TransactionListBackfillCounts>('backfill:transaction-lists');

    // Assert: on its shards, off the old partitions, listed in its place; a second run moves nothing
    expect(first.counts.moved).toBeGreaterThanOrEqual(1);
    expect(first.output).toMatch(/^Done: scanned \d+ items, found \d+ transactions on the lists before the shards: moved \d+/m);
    expect(moved).toMatchObject(keys.transactionIndex(partner.partnerId, ids[1]!, String(moved.createdAt)));
    expect(moved).not.toHaveProperty('gsi1pk');
    expect(moved).not.toHaveProperty('gsi2pk');
    expect(second.counts).toMatchObject({ found: 0, moved: 0, left: 0 });
    expect(await itemOf(ids[1]!)).toEqual(moved);
    expect(await allListed()).toEqual(newestFirst);
  }, TEST_TIMEOUT_MS);
});
