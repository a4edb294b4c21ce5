/**
 * The settlement index on its shards (docs/data-model.md, decisions.md §11): a partner's waiting entries spread over
 * `SETTLE#<partner>#<shard>` by payment, read back merged in the index's order (oldest payment first within each
 * client and currency) with whatever still waits on the partition before the shards; `GET /balances` pages that never
 * repeat or skip a group across shards, even while payments arrive; and `npm run backfill:settlement-index`, which
 * moves what waits on the old partition to its shard once, however often it runs.
 */
import { describe, expect, it } from '@jest/globals';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { SettlementIndexBackfillCounts } from '../../../infra/scripts/backfill-settlement-index';
import { settlementDeps } from '../../../lib/composition';
import { currencyCode } from '../../../lib/domain/money';
import { listBalances } from '../../../lib/store/balances';
import { documentClient, tableName } from '../../../lib/store/dynamo';
import { keys, SETTLEMENT_SHARDS } from '../../../lib/store/keys';
import { listWaiting } from '../../../lib/store/settlement-waiting';
import { runSettlement } from '../../../lib/use-cases/settlements';
import { usePartnerSuite } from '../../support/api';
import { runNpmScript } from '../../support/operator-command';
import { seedWaitingPayments } from '../../support/settlement';

const TEST_TIMEOUT_MS = 120_000;
const suite = usePartnerSuite();

const itemOf = async (svcTxId: string) => (await documentClient.send(new GetCommand({ TableName: tableName, Key: keys.transaction(svcTxId), ConsistentRead: true }))).Item ?? {};

/** A waiting payment as written before the shards: on its partner's one partition. */
const asBeforeTheShards = (partnerId: string, svcTxId: string) =>
  documentClient.send(
    new UpdateCommand({
      TableName: tableName,
      Key: keys.transaction(svcTxId),
      UpdateExpression: 'SET gsi3pk = :old',
      ExpressionAttributeValues: { ':old': keys.settlementPartitionBeforeShards(partnerId) },
    }),
  );

async function partnerWithClients(count: number) {
  const partner = await suite.api.createPartner();
  const clients: string[] = [];
  for (let i = 0; i < count; i++) clients.push(await suite.api.createClient(partner));
  return { partnerId: partner.partnerId, clients: clients.sort() };
}

describe('the settlement index on its shards', () => {
  it(
    'spreads one merchant`s payments over the shards and reads them back in the index`s order, with those still on the partition before the shards',
    async () => {
      // Arrange: 120 payments of one merchant, a second apart; 15 of them as written before the shards
      const { partnerId, clients } = await partnerWithClients(1);
      const payee = { partnerId, clientId: clients[0]! };
      const ids = await seedWaitingPayments(payee, 120);
      const old = ids.filter((_, n) => n % 8 === 3);
      await Promise.all(old.map((id) => asBeforeTheShards(partnerId, id)));
      const shards = new Set((await Promise.all(ids.map(itemOf))).map((item) => item.gsi3pk));

      // Act
      const waiting = await listWaiting(partnerId, undefined, undefined);
      const balances = await listBalances(partnerId, { limit: 10 });
      const batches = await runSettlement(settlementDeps, { partnerId });

      // Assert: many shards and the old partition; read oldest first; one batch takes them all, the old ones included
      expect(shards.size).toBeGreaterThan(SETTLEMENT_SHARDS / 2);
      expect(shards.has(keys.settlementPartitionBeforeShards(partnerId))).toBe(true);
      expect(waiting.items.map((item) => item.svcTxId)).toEqual(ids);
      expect(balances.items).toEqual([expect.objectContaining({ clientId: payee.clientId, creditsMinor: waiting.items.reduce((sum, item) => sum + item.netMinor, 0), debitsMinor: 0 })]);
      expect(batches.map((batch) => batch.transactionIds)).toEqual([ids]);
      expect((await listWaiting(partnerId, undefined, undefined)).items).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'pages GET /balances one group at a time across the shards, never repeating or skipping a group while payments arrive in every group',
    async () => {
      // Arrange: 4 merchants in 2 currencies each: 8 groups, each over several shards
      const { partnerId, clients } = await partnerWithClients(4);
      const currencies = ['EUR', 'USD'];
      for (const clientId of clients) for (const currency of currencies) await seedWaitingPayments({ partnerId, clientId }, 6, { currency });
      const expected = clients.flatMap((clientId) => currencies.map((currency) => `${clientId} ${currency}`));

      // Act: a page of one group at a time; before each next page, one more payment in every group (older and newer)
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await listBalances(partnerId, { limit: 1, cursor });
        seen.push(...page.items.map((balance) => `${balance.clientId} ${balance.currency}`));
        cursor = page.nextCursor ?? undefined;
        pages++;
        await Promise.all(
          clients.flatMap((clientId) => currencies.map((currency) => seedWaitingPayments({ partnerId, clientId }, 1, { currency, from: new Date(Date.parse('2026-01-01') + pages * 60_000).toISOString() }))),
        );
      } while (cursor !== undefined && pages < 20);

      // Assert
      expect(seen).toEqual(expected);
      const filtered = await listBalances(partnerId, { clientId: clients[2], currency: currencyCode('USD'), limit: 5 });
      expect(filtered.items.map((balance) => `${balance.clientId} ${balance.currency}`)).toEqual([`${clients[2]} USD`]);
    },
    TEST_TIMEOUT_MS,
  );
});

describe('npm run backfill:settlement-index', () => {
  it(
    'moves what waits on the partition before the shards to its payment`s shard once, however often it runs; runs and balances read it throughout',
    async () => {
      // Arrange: 20 waiting payments, 7 as written before the shards
      const { partnerId, clients } = await partnerWithClients(1);
      const ids = await seedWaitingPayments({ partnerId, clientId: clients[0]! }, 20);
      const old = ids.slice(5, 12);
      await Promise.all(old.map((id) => asBeforeTheShards(partnerId, id)));
      const before = await listBalances(partnerId, { limit: 10 });

      // Act
      const first = await runNpmScript<SettlementIndexBackfillCounts>('backfill:settlement-index');
      const moved = await Promise.all(old.map(itemOf));
      const second = await runNpmScript<SettlementIndexBackfillCounts>('backfill:settlement-index');

      // Assert: each on its payment's shard, the balance the same, a second run finds nothing, a run takes all 20
      expect(first.counts.moved).toBeGreaterThanOrEqual(old.length);
      expect(first.output).toMatch(/^Done: scanned \d+ items, found \d+ entries waiting on the settlement partitions before the shards: moved \d+/m);
      expect(moved.map((item) => item.gsi3pk)).toEqual(old.map((id) => keys.settlementShardOf(partnerId, id)));
      expect(second.counts).toMatchObject({ found: 0, moved: 0, left: 0 });
      expect(await listBalances(partnerId, { limit: 10 })).toEqual(before);
      expect((await runSettlement(settlementDeps, { partnerId })).map((batch) => batch.transactionIds)).toEqual([ids]);
    },
    TEST_TIMEOUT_MS,
  );
});
