/**
 * "A paid payment stuck pending" (decisions.md §12), end to end through the pipeline `npm start` composes: a sandbox
 * processor whose events go to this file's HTTP API, or are lost (`dropEvents`), the processor webhook, the outbox,
 * the local queue and the real consumer delivering to a partner endpoint. On a table of its own
 * (`useDeliveryWorld`), so the reconciliation's Queries of every shard see this file's transactions only.
 *
 * - attach-intent on an intent the buyer already paid applies the success at once, through the event's path;
 * - the reconciliation finds a pending transaction whose every event was lost and applies the intent's outcome;
 *   run twice, or beside the late event, the transaction moves once: one status change (its revision), one partner
 *   webhook, one record of the applied outcome.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { PartnerCredentials, TestApi as TestApiType } from '../../support/api';
import { until, useDeliveryWorld } from '../../support/delivery-world';
import { WebhookReceiver } from '../../support/webhook-receiver';

const world = await useDeliveryWorld('recon');
const { sandbox, stripe } = world;
const { createHandler } = await import('../../../functions/reconciliation-scheduled');
const { invokeFunction } = await import('../../../infra/local/lambda/adapter');
const { enforceTableGrants } = await import('../../../infra/local/lambda/table-grants');
const { reconciliationDeps } = await import('../../../lib/composition/reconciliation');
const { getTransaction } = await import('../../../lib/store/transactions');
const { documentClient, dynamoClient, tableName } = await import('../../../lib/store/dynamo');
enforceTableGrants(dynamoClient);
type Report = Awaited<ReturnType<typeof import('../../../lib/use-cases/reconciliation').runReconciliation>>;

const TEST_TIMEOUT_MS = 60_000;
const EVENTS = ['transaction_succeeded', 'transaction_failed', 'transaction_abandoned'];

let api: TestApiType;
let receiver: WebhookReceiver;
let partner: PartnerCredentials;
let clientId: string;

beforeAll(async () => {
  api = world.api();
  receiver = await WebhookReceiver.start();
  partner = await api.createPartner();
  clientId = await api.createClient(partner);
  const endpoint = await api.admin('POST', `/admin/partners/${partner.partnerId}/webhook-endpoints`, { name: 'orders', url: receiver.url('/hook'), events: EVENTS });
  if (endpoint.status !== 201) throw new Error(`endpoint not created: ${JSON.stringify(endpoint.body)}`);
}, 30_000);

afterAll(async () => {
  await receiver?.close();
});

/**
 * A reconciliation run as the schedule invokes it (a Lambda context with its deadline, and the function's table grants
 * enforced as IAM would: infra/local/lambda/table-grants.ts), `minutesLater` (default 11: every first look is due), seeing
 * only the transactions `only` names among those due (the file's table is shared by its tests, so counts are exact).
 */
const reconcile = (only: readonly string[], options: { minutesLater?: number; giveUpAfterMs?: number } = {}): Promise<Report> => {
  const later = (options.minutesLater ?? 11) * 60_000;
  const queue = reconciliationDeps.queue;
  const deps = {
    ...reconciliationDeps,
    now: () => new Date(Date.now() + later),
    queue: { ...queue, listDue: async (shard: number, dueBy: string, limit: number) => (await queue.listDue(shard, dueBy, limit)).filter((due) => only.includes(due.svcTxId)) },
  };
  const limits = { maxChecks: 500, concurrency: 4, giveUpAfterMs: options.giveUpAfterMs ?? 7 * 24 * 60 * 60_000 };
  return invokeFunction(createHandler(deps, limits), {}, 'reconciliation-scheduled', 300_000);
};

const NOTHING = { checked: 0, fixed: 0, gaveUp: 0, open: 0, released: 0, moved: 0, failed: 0, more: false, backlog: 0, oldestDueAgeSeconds: 0 };

const initialize = async () => {
  const response = await api.signed(partner, '/transactions/initialize', { partner_id: partner.partnerId, client_id: clientId, amount: 15, currency: 'USD', partner_reference: `order-${randomUUID()}` });
  expect(response.status).toBe(201);
  return response.body.svc_tx_id as string;
};

const checkout = async () => {
  const response = await api.signed(partner, '/transactions/checkout-intent', {
    partner_id: partner.partnerId,
    client_id: clientId,
    amount: 15,
    currency: 'USD',
    email: 'buyer@example.com',
    partner_reference: `order-${randomUUID()}`,
  });
  expect(response.status).toBe(201);
  return { svcTxId: response.body.svc_tx_id as string, intentId: response.body.processor_payment_intent_id as string };
};

const attach = (svcTxId: string, intentId: string) =>
  api.signed(partner, '/transactions/attach-intent', { svc_tx_id: svcTxId, processor_payment_intent_id: intentId }, { idempotencyKey: `attach-${svcTxId}` });

/** The sandbox's `type` event about `intentId` once `ready` holds of it. */
const sandboxEvent = (type: string, intentId: string, ready: (record: ReturnType<typeof sandbox.events>[number]) => boolean) =>
  until(`the sandbox's ${type} for ${intentId}`, () =>
    sandbox.events().find((record) => record.event.type === type && (record.event.data.object as { id: string }).id === intentId && ready(record)),
  );

/** The partner's deliveries of one transaction as the admin list shows them (written in the same write as the move). */
async function deliveriesOf(svcTxId: string): Promise<Array<Record<string, any>>> {
  const listed = await api.admin('GET', `/admin/partners/${partner.partnerId}/webhook-deliveries?limit=200`);
  expect(listed.status).toBe(200);
  return (listed.body.items as Array<Record<string, any>>).filter((delivery) => delivery.svc_tx_id === svcTxId);
}

/** The webhook requests the partner endpoint received about one transaction. */
const webhooksAbout = (svcTxId: string) => receiver.requests.map((request) => JSON.parse(request.body) as Record<string, unknown>).filter((body) => body.svc_tx_id === svcTxId);

/** Every item in the transaction's partition (the transaction, its ledger entries) and whether its index keys are set. */
async function partitionOf(svcTxId: string) {
  const { Items = [] } = await documentClient.send(new QueryCommand({ TableName: tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `TX#${svcTxId}` } }));
  return Items.map((item) => ({ sk: item.sk as string, settlementIndex: item.gsi3pk !== undefined, reconciliationIndex: item.gsi4pk !== undefined }));
}

const processedEvent = async (eventId: string) =>
  (await documentClient.send(new GetCommand({ TableName: tableName, Key: { pk: `PROCESSOR_EVENT#${eventId}`, sk: 'PROCESSOR_EVENT' }, ConsistentRead: true }))).Item;

/** One move to succeeded, told once: revision 1, the sale waiting for settlement, no longer waiting for the processor, one delivery. */
async function expectSucceededOnce(svcTxId: string) {
  const transaction = await getTransaction(svcTxId);
  expect(transaction).toMatchObject({ status: 'succeeded', revision: 1, fees: expect.objectContaining({ netAmountMinor: expect.any(Number) }) });
  expect(await partitionOf(svcTxId)).toEqual([{ sk: 'TX', settlementIndex: true, reconciliationIndex: false }]);
  const deliveries = await deliveriesOf(svcTxId);
  expect(deliveries.map((delivery) => delivery.event)).toEqual(['transaction_succeeded']);
  return deliveries[0]!;
}

describe('attach-intent on an intent that already has its outcome', () => {
  it('answers succeeded for an intent the buyer paid before it was linked, and the partner gets transaction_succeeded', async () => {
    // Arrange: the buyer pays first; the processor's event finds no transaction (404) and gives up
    const svcTxId = await initialize();
    const intent = await stripe.paymentIntents.create({ amount: 1500, currency: 'usd', automatic_payment_methods: { enabled: true } });
    await stripe.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_visa' });
    const missed = await sandboxEvent('payment_intent.succeeded', intent.id, (record) => record.outcome === 'failed');
    expect(missed.attempts.map((attempt) => attempt.status)).toEqual([404]);

    // Act
    const attached = await attach(svcTxId, intent.id);

    // Assert: the success applied in the attach's answer, with its split, its webhook and nothing twice
    expect(attached.status).toBe(200);
    expect(attached.body).toEqual({ svc_tx_id: svcTxId, status: 'succeeded', processor_payment_intent_id: intent.id });
    const delivery = await expectSucceededOnce(svcTxId);
    await until('the partner webhook', () => (webhooksAbout(svcTxId).length > 0 ? true : undefined));
    expect(webhooksAbout(svcTxId)).toEqual([expect.objectContaining({ event: 'transaction_succeeded', status: 'succeeded', amount: 15, currency: 'USD' })]);
    expect(await processedEvent(`intent_state_${intent.id}_succeeded`)).toMatchObject({ svcTxId, fromStatus: 'pending', toStatus: 'succeeded' });

    // Act: the processor's event, sent again late, now finds the transaction
    expect(sandbox.redeliver(missed.event.id)).toBe(true);
    const late = await sandboxEvent('payment_intent.succeeded', intent.id, (record) => record.outcome === 'delivered');

    // Assert: answered with the status, changing nothing
    expect(JSON.parse(late.attempts.at(-1)?.responseBody ?? '{}')).toEqual({ received: true, svc_tx_id: svcTxId, status: 'succeeded' });
    expect((await deliveriesOf(svcTxId)).map((item) => item.id)).toEqual([delivery.id]);
    expect(await getTransaction(svcTxId)).toMatchObject({ status: 'succeeded', revision: 1 });
  }, TEST_TIMEOUT_MS);

  it('answers abandoned for a canceled intent, and failed for one whose payment was declined, each told to the partner', async () => {
    // Arrange
    const [canceledTx, declinedTx] = [await initialize(), await initialize()];
    const [canceled, declined] = [
      await stripe.paymentIntents.create({ amount: 1500, currency: 'usd', automatic_payment_methods: { enabled: true } }),
      await stripe.paymentIntents.create({ amount: 1500, currency: 'usd', automatic_payment_methods: { enabled: true } }),
    ];
    await stripe.paymentIntents.cancel(canceled.id);
    await stripe.paymentIntents.confirm(declined.id, { payment_method: 'pm_card_chargeDeclined' }).catch(() => undefined);

    // Act
    const answers = [await attach(canceledTx, canceled.id), await attach(declinedTx, declined.id)];

    // Assert
    expect(answers.map((answer) => [answer.status, answer.body.status])).toEqual([
      [200, 'abandoned'],
      [200, 'failed'],
    ]);
    expect((await deliveriesOf(canceledTx)).map((delivery) => delivery.event)).toEqual(['transaction_abandoned']);
    expect((await deliveriesOf(declinedTx)).map((delivery) => delivery.event)).toEqual(['transaction_failed']);
  }, TEST_TIMEOUT_MS);
});

describe('the scheduled reconciliation', () => {
  it('applies the success of a payment whose every event was lost, once, however often it runs', async () => {
    // Arrange: every event of this payment is lost
    sandbox.dropEvents(true);
    const { svcTxId, intentId } = await checkout();
    await stripe.paymentIntents.confirm(intentId, { payment_method: 'pm_card_visa' });
    sandbox.dropEvents(false);
    await sandboxEvent('payment_intent.succeeded', intentId, (record) => record.outcome === 'dropped');
    expect(await getTransaction(svcTxId)).toMatchObject({ status: 'pending', revision: 0 });

    // Act
    const first = await reconcile([svcTxId]);
    const second = await reconcile([svcTxId]);

    // Assert: fixed by the first run; the second finds nothing to do
    expect(first).toEqual({ ...NOTHING, checked: 1, fixed: 1, oldestDueAgeSeconds: expect.any(Number) });
    expect(first.oldestDueAgeSeconds).toBeLessThanOrEqual(61);
    expect(second).toEqual(NOTHING);
    const delivery = await expectSucceededOnce(svcTxId);
    expect(await processedEvent(`intent_state_${intentId}_succeeded`)).toMatchObject({ svcTxId, fromStatus: 'pending', toStatus: 'succeeded', partnerEventIds: [delivery.event_id] });
    await until('the partner webhook', () => (webhooksAbout(svcTxId).length > 0 ? true : undefined));
    expect(webhooksAbout(svcTxId).map((body) => body.event)).toEqual(['transaction_succeeded']);
  }, TEST_TIMEOUT_MS);

  const orders: Array<[string, 'together' | 'event first' | 'run first']> = [
    ['at the same time as the run', 'together'],
    ['before the run', 'event first'],
    ['after the run', 'run first'],
  ];
  it.each(orders)('moves the transaction once when the lost event arrives late, %s', async (_when, order) => {
    // Arrange
    sandbox.dropEvents(true);
    const { svcTxId, intentId } = await checkout();
    await stripe.paymentIntents.confirm(intentId, { payment_method: 'pm_card_visa' });
    sandbox.dropEvents(false);
    const dropped = await sandboxEvent('payment_intent.succeeded', intentId, (record) => record.outcome === 'dropped');
    const lateEvent = async () => {
      expect(sandbox.redeliver(dropped.event.id)).toBe(true);
      return sandboxEvent('payment_intent.succeeded', intentId, (record) => record.outcome === 'delivered');
    };

    // Act
    if (order === 'together') await Promise.all([reconcile([svcTxId]), lateEvent()]);
    if (order === 'event first') await lateEvent().then(() => reconcile([svcTxId]));
    if (order === 'run first') await reconcile([svcTxId]).then(lateEvent);

    // Assert: one move, one record of it (the event's or the intent state's, whichever came first), one webhook
    await expectSucceededOnce(svcTxId);
    const records = [await processedEvent(dropped.event.id), await processedEvent(`intent_state_${intentId}_succeeded`)].filter((item) => item !== undefined);
    expect(records).toEqual([expect.objectContaining({ svcTxId, fromStatus: 'pending', toStatus: 'succeeded' })]);
    if (order === 'event first') expect(records[0]?.eventId).toBe(dropped.event.id);
    if (order === 'run first') expect(records[0]?.eventId).toBe(`intent_state_${intentId}_succeeded`);
    await until('the partner webhook', () => (webhooksAbout(svcTxId).length > 0 ? true : undefined));
    expect(webhooksAbout(svcTxId).map((body) => body.event)).toEqual(['transaction_succeeded']);
  }, TEST_TIMEOUT_MS);

  it('leaves a payment the processor still holds open pending, its next look 20 minutes after this one', async () => {
    // Arrange: a checkout nobody has paid yet
    const { svcTxId } = await checkout();
    const before = await documentClient.send(new GetCommand({ TableName: tableName, Key: { pk: `TX#${svcTxId}`, sk: 'TX' }, ConsistentRead: true }));

    // Act
    const runAt = Date.now() + 11 * 60_000;
    const report = await reconcile([svcTxId]);
    const again = await reconcile([svcTxId], { minutesLater: 11 + 15 });

    // Assert: looked at once; not again 15 minutes on
    const after = await documentClient.send(new GetCommand({ TableName: tableName, Key: { pk: `TX#${svcTxId}`, sk: 'TX' }, ConsistentRead: true }));
    expect(report).toEqual({ ...NOTHING, checked: 1, open: 1, oldestDueAgeSeconds: expect.any(Number) });
    expect(again).toEqual(NOTHING);
    expect(after.Item).toMatchObject({ status: 'pending', revision: before.Item?.revision ?? 0, updatedAt: before.Item?.updatedAt, gsi4pk: before.Item?.gsi4pk });
    expect(after.Item?.reconciliation).toEqual({ since: before.Item?.updatedAt, checks: 1 });
    const nextDue = Date.parse((after.Item?.gsi4sk as string).split('#')[0] ?? '');
    expect(nextDue - runAt).toBeGreaterThanOrEqual(20 * 60_000);
    expect(nextDue - runAt).toBeLessThan(21 * 60_000);
    expect(await deliveriesOf(svcTxId)).toEqual([]);
  }, TEST_TIMEOUT_MS);

  it('gives up on a payment open past the give-up period: cancels its intent at the processor and abandons it, once', async () => {
    // Arrange: a checkout nobody pays
    const { svcTxId, intentId } = await checkout();

    // Act: a run for which the give-up period has passed
    const report = await reconcile([svcTxId], { giveUpAfterMs: 0 });

    // Assert: the intent canceled (no late buyer can pay it), the transaction abandoned and the partner told, once
    expect(report).toEqual({ ...NOTHING, checked: 1, gaveUp: 1, oldestDueAgeSeconds: expect.any(Number) });
    expect((await stripe.paymentIntents.retrieve(intentId)).status).toBe('canceled');
    await expect(stripe.paymentIntents.confirm(intentId, { payment_method: 'pm_card_visa' })).rejects.toMatchObject({ code: 'payment_intent_unexpected_state' });
    await sandboxEvent('payment_intent.canceled', intentId, (record) => record.outcome === 'delivered');
    expect(await getTransaction(svcTxId)).toMatchObject({ status: 'abandoned', revision: 1 });
    expect(await partitionOf(svcTxId)).toEqual([{ sk: 'TX', settlementIndex: false, reconciliationIndex: false }]);
    expect((await deliveriesOf(svcTxId)).map((delivery) => delivery.event)).toEqual(['transaction_abandoned']);
  }, TEST_TIMEOUT_MS);

  it('at the give-up, applies the success of an intent the processor will not cancel because it was paid', async () => {
    // Arrange: paid, every event lost
    sandbox.dropEvents(true);
    const { svcTxId, intentId } = await checkout();
    await stripe.paymentIntents.confirm(intentId, { payment_method: 'pm_card_visa' });
    sandbox.dropEvents(false);

    // Act
    const report = await reconcile([svcTxId], { giveUpAfterMs: 0 });

    // Assert
    expect(report).toEqual({ ...NOTHING, checked: 1, fixed: 1, oldestDueAgeSeconds: expect.any(Number) });
    expect((await stripe.paymentIntents.retrieve(intentId)).status).toBe('succeeded');
    await expectSucceededOnce(svcTxId);
  }, TEST_TIMEOUT_MS);

  it('keeps watching a failed payment: the success of the buyer\'s retry on the same intent is applied though its event was lost', async () => {
    // Arrange: a declined payment, every event lost
    sandbox.dropEvents(true);
    const { svcTxId, intentId } = await checkout();
    await stripe.paymentIntents.confirm(intentId, { payment_method: 'pm_card_chargeDeclined' }).catch(() => undefined);

    // Act: a run applies the decline; the buyer then pays on the same intent, its events lost too
    const declined = await reconcile([svcTxId]);
    const failed = await partitionOf(svcTxId);
    await stripe.paymentIntents.confirm(intentId, { payment_method: 'pm_card_visa' });
    sandbox.dropEvents(false);
    const retried = await reconcile([svcTxId], { minutesLater: 11 + 11 });

    // Assert: failed, still watched; then succeeded, and out of the index
    expect(declined).toEqual({ ...NOTHING, checked: 1, fixed: 1, oldestDueAgeSeconds: expect.any(Number) });
    expect(failed).toEqual([{ sk: 'TX', settlementIndex: false, reconciliationIndex: true }]);
    expect(retried).toEqual({ ...NOTHING, checked: 1, fixed: 1, oldestDueAgeSeconds: expect.any(Number) });
    expect(await getTransaction(svcTxId)).toMatchObject({ status: 'succeeded', revision: 2 });
    expect(await partitionOf(svcTxId)).toEqual([{ sk: 'TX', settlementIndex: true, reconciliationIndex: false }]);
    expect((await deliveriesOf(svcTxId)).map((delivery) => delivery.event).sort()).toEqual(['transaction_failed', 'transaction_succeeded']);
  }, TEST_TIMEOUT_MS);
});
