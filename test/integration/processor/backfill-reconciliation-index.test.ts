/**
 * `npm run backfill:reconciliation-index` (infra/scripts/backfill-reconciliation-index.ts) against this run's DynamoDB Local:
 * a transaction that waited for the processor before gsi4 existed (pending with an intent, no gsi4 keys) is given its
 * keys and watch once, however often the command runs, so the reconciliation lists it; transactions that no longer
 * wait, or never had an intent, are left alone. Run as an operator would, in its own process, the table and
 * endpoint from the environment (this run's, set by the global setup).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ReconciliationBackfillCounts } from '../../../infra/scripts/backfill-reconciliation-index';
import { nextCheckDue } from '../../../lib/domain/reconciliation';
import { documentClient, tableName } from '../../../lib/store/dynamo';
import { keys, reconciliationShardOf } from '../../../lib/store/keys';
import { listDue } from '../../../lib/store/reconciliation';
import { TestApi } from '../../support/api';
import { runNpmScript } from '../../support/operator-command';

const TEST_TIMEOUT_MS = 60_000;
let api: TestApi;
beforeAll(async () => {
  api = await TestApi.start();
});
afterAll(() => api.close());

const runBackfill = () => runNpmScript<ReconciliationBackfillCounts>('backfill:reconciliation-index');

const itemOf = async (svcTxId: string) =>
  (await documentClient.send(new GetCommand({ TableName: tableName, Key: keys.transaction(svcTxId), ConsistentRead: true }))).Item ?? {};

/** The transaction as it was written before gsi4: no index keys, no watch; `status` if given. */
const asBeforeTheIndex = (svcTxId: string, status?: string) =>
  documentClient.send(
    new UpdateCommand({
      TableName: tableName,
      Key: keys.transaction(svcTxId),
      UpdateExpression: `REMOVE gsi4pk, gsi4sk, reconciliation${status === undefined ? '' : ' SET #status = :status'}`,
      ...(status === undefined ? {} : { ExpressionAttributeNames: { '#status': 'status' }, ExpressionAttributeValues: { ':status': status } }),
    }),
  );

describe('npm run backfill:reconciliation-index', () => {
  it('indexes the transactions waiting for the processor without gsi4 keys once, however often it runs, and leaves the others alone', async () => {
    // Arrange: a waiting checkout, a failed one and an initialized transaction (no intent), all as before the index
    const partner = await api.createPartner();
    const clientId = await api.createClient(partner);
    const body = { partner_id: partner.partnerId, client_id: clientId, amount: 15, currency: 'USD', email: 'buyer@example.com' };
    const [waiting, failed] = await Promise.all(
      [0, 1].map(async () => (await api.signed(partner, '/transactions/checkout-intent', { ...body, partner_reference: `order-${randomUUID()}` })).body.svc_tx_id as string),
    );
    const initialized = (await api.signed(partner, '/transactions/initialize', { ...body, partner_reference: `order-${randomUUID()}` })).body.svc_tx_id as string;
    await asBeforeTheIndex(waiting!);
    await asBeforeTheIndex(failed!, 'failed');
    const updatedAt = (await itemOf(waiting!)).updatedAt as string;

    // Act
    const first = await runBackfill();
    const indexed = await itemOf(waiting!);
    const second = await runBackfill();

    // Assert: its first look due 10 minutes after its last change, listed by the reconciliation; the others untouched
    expect(first.counts.indexed).toBeGreaterThanOrEqual(1);
    expect(first.output).toMatch(/^Done: scanned \d+ items, found \d+ waiting transactions without gsi4 keys: indexed \d+/m);
    expect(indexed).toMatchObject({
      status: 'pending',
      gsi4pk: keys.reconciliationPartition(reconciliationShardOf(waiting!)),
      gsi4sk: `${nextCheckDue(updatedAt, 0)}#${waiting}`,
      reconciliation: { since: updatedAt, checks: 0 },
    });
    expect((await listDue(reconciliationShardOf(waiting!), nextCheckDue(updatedAt, 0), 10_000)).map((due) => due.svcTxId)).toContain(waiting);
    expect(await itemOf(waiting!)).toEqual(indexed);
    expect(second.counts.left).toBe(0);
    expect((await itemOf(failed!)).gsi4pk).toBeUndefined();
    expect((await itemOf(initialized)).gsi4pk).toBeUndefined();
  }, TEST_TIMEOUT_MS);
});
