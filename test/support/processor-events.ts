/**
 * Processor events for tests: Stripe-shaped events built and signed exactly as the sandbox processor builds and
 * signs them (`infra/local/sandbox/processor/events.ts`), and the table items a test arranges or inspects
 * around them (transactions with an intent, webhook endpoints, deliveries, processed-event records).
 */
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { randomId, SANDBOX_API_VERSION, signatureHeader } from '../../infra/local/sandbox/processor/events';
import { config } from '../../lib/config';
import { newId } from '../../lib/domain/ids';
import { currencyCode } from '../../lib/domain/money';
import type { SettlementStatus, Transaction } from '../../lib/domain/transaction';
import type { PartnerEvent, WebhookDelivery } from '../../lib/domain/webhooks';
import { toDelivery } from '../../lib/store/deliveries';
import { queryShardedPage } from '../../lib/store/paging';
import { documentClient, tableName } from '../../lib/store/dynamo';
import { keys } from '../../lib/store/keys';
import { createTransaction } from '../../lib/store/transactions';
import { transactionFixture } from './transactions';

/** The webhook secret the service under test verifies with (the local default unless a test set another). */
export const webhookSecret = () => config.PROCESSOR_WEBHOOK_SECRET ?? '';

/** An event as the sandbox sends it: Stripe's envelope, pretty-printed (the signature covers these bytes). */
export function eventBody(type: string, object: unknown, id = randomId('evt_')): string {
  const event = {
    id,
    object: 'event',
    api_version: SANDBOX_API_VERSION,
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
    data: { object },
  };
  return JSON.stringify(event, null, 2);
}

/** The `processor-signature` value the sandbox would send for `body` now (or `ageSeconds` ago). */
export const signed = (body: string, options: { ageSeconds?: number; secret?: string } = {}) =>
  signatureHeader(options.secret ?? webhookSecret(), body, Math.floor(Date.now() / 1000) - (options.ageSeconds ?? 0));

/** A PaymentIntent as it appears in `payment_intent.*` events (amount in Stripe's units, currency lower-case). */
export const intentObject = (id: string, amount: number, currency: string, status = 'succeeded') => ({
  id,
  object: 'payment_intent',
  amount,
  amount_received: status === 'succeeded' ? amount : 0,
  currency,
  status,
  metadata: {},
  latest_charge: randomId('ch_'),
});

/** A charge after a refund of `refunded` of its `amount` (fully refunded when equal). */
export const refundedCharge = (paymentIntent: string, amount: number, refunded: number, currency: string) => ({
  id: randomId('ch_'),
  object: 'charge',
  amount,
  amount_captured: amount,
  amount_refunded: refunded,
  currency,
  payment_intent: paymentIntent,
  refunded: refunded === amount,
  status: 'succeeded',
});

export const dispute = (paymentIntent: string, amount: number, currency: string) => ({
  id: randomId('dp_'),
  object: 'dispute',
  amount,
  charge: randomId('ch_'),
  currency,
  payment_intent: paymentIntent,
  reason: 'fraudulent',
  status: 'needs_response',
});

/**
 * A pending transaction of `partnerId`'s client, linked to a new payment intent id, written by the service's own
 * repository (the partner and client must exist and be active).
 */
export async function pendingTransaction(
  partnerId: string,
  clientId: string,
  money: { amountMinor: number; currency: string },
  meta: Record<string, unknown> | null = { order: 42 },
  /** When it was created: earlier than now for a transaction a day-boundary settlement run should take. */
  now = new Date().toISOString(),
): Promise<Transaction> {
  return createTransaction(
    transactionFixture({
      id: newId.transactionRecord(),
      svcTxId: newId.svcTx(),
      partnerId,
      clientId,
      processorPaymentIntentId: randomId('pi_'),
      amountMinor: money.amountMinor,
      currency: currencyCode(money.currency),
      meta,
      createdAt: now,
    }),
  );
}

/** A webhook endpoint item, as the admin API stores one (the secret is not read by these tests). */
export async function putWebhookEndpoint(partnerId: string, events: PartnerEvent[]): Promise<string> {
  const id = newId.webhookEndpoint();
  await documentClient.send(
    new PutCommand({
      TableName: tableName,
      Item: {
        ...keys.webhookEndpoint(partnerId, id),
        entity: 'webhookEndpoint',
        id,
        partnerId,
        name: `endpoint ${events.join(',')}`,
        url: 'https://partner.example/webhooks',
        events,
        secret: 'sealed-secret-not-read-here',
        createdAt: new Date().toISOString(),
      },
    }),
  );
  return id;
}

/**
 * Every delivery of one transaction, oldest first: the shard of its partner's deliveries list that holds them all
 * (and the list's partition before the shards), narrowed to the transaction (the index holds each delivery's
 * `svcTxId`), every page.
 */
export async function deliveriesOf(partnerId: string, svcTxId: string): Promise<WebhookDelivery[]> {
  const found: WebhookDelivery[] = [];
  let cursor: string | undefined;
  do {
    const page = await queryShardedPage({
      list: `test/deliveries/${partnerId}`,
      sources: [
        { index: 'gsi5', partition: keys.transactionDeliveriesShard(partnerId, svcTxId) },
        { index: 'gsi1', partition: keys.deliveriesOf(partnerId) },
      ],
      filter: { expression: 'svcTxId = :svcTxId', names: {}, values: { ':svcTxId': svcTxId } },
      limit: 200,
      cursor,
      toItem: toDelivery,
    });
    found.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return found.reverse();
}

/** The raw item of a key (to see what the service wrote, index keys included). */
export async function rawItem(key: { pk: string; sk: string }): Promise<Record<string, unknown> | undefined> {
  const { Item } = await documentClient.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }));
  return Item;
}

/** A payment's ledger entries after its sale (`TX#<svc_tx_id>` / `ENTRY#<key>`, decisions.md §5a), in key order. */
export async function entriesOf(svcTxId: string): Promise<Record<string, unknown>[]> {
  const found: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await documentClient.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :entry)',
        ExpressionAttributeValues: { ':pk': keys.transaction(svcTxId).pk, ':entry': 'ENTRY#' },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    found.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  return found;
}

/** What a settlement run does to a transaction it batches: `queued`, out of the settlement index. */
export async function markSettled(svcTxId: string, settlementStatus: Exclude<SettlementStatus, 'unsettled'> = 'queued'): Promise<void> {
  await documentClient.send(
    new UpdateCommand({
      TableName: tableName,
      Key: keys.transaction(svcTxId),
      UpdateExpression: 'SET settlementStatus = :status REMOVE gsi3pk, gsi3sk',
      ExpressionAttributeValues: { ':status': settlementStatus },
    }),
  );
}
