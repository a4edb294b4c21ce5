/**
 * POST /webhooks/processor over HTTP (the local API, the same handler as AWS) against DynamoDB Local: events
 * built and signed exactly as the sandbox processor signs them. The error codes of the spec with decisions.md §3
 * statuses, the moves of decisions.md §5, the fees of §6, one partner event per move with one delivery per
 * subscribed endpoint, and the settlement bookkeeping of docs/data-model.md.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { createHandler } from '../../../functions/processor-webhook';
import { processorEventDeps } from '../../../lib/composition';
import type { Transaction } from '../../../lib/domain/transaction';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from '../../../lib/store/dynamo';
import { keys } from '../../../lib/store/keys';
import { usePartnerSuite } from '../../support/api';
import { httpEvent, lambdaContext } from '../../support/events';
import {
  deliveriesOf,
  dispute,
  entriesOf,
  eventBody,
  intentObject,
  markSettled,
  pendingTransaction,
  putWebhookEndpoint,
  rawItem,
  refundedCharge,
  signed,
} from '../../support/processor-events';

const suite = usePartnerSuite(); // service fee 1.5 %
let clientId: string;
/** Subscribed to succeeded, refunded and chargeback; and one to failed only; and one to abandoned only. */
const endpoints: { main: string; failures: string; abandonments: string } = { main: '', failures: '', abandonments: '' };

beforeAll(async () => {
  // A client with its own fee (3 %) and a flat USD fee of 0.30, under a partner whose service fee is 1.5 %
  clientId = await suite.api.createClient(suite.partner, { partner_fee_percentage: 3, partner_fee_flat_usd: 0.3 });
  endpoints.main = await putWebhookEndpoint(suite.partner.partnerId, ['transaction_succeeded', 'transaction_refunded', 'transaction_chargeback']);
  endpoints.failures = await putWebhookEndpoint(suite.partner.partnerId, ['transaction_failed']);
  endpoints.abandonments = await putWebhookEndpoint(suite.partner.partnerId, ['transaction_abandoned']);
});

const post = (body: string, headers: Record<string, string> = { 'processor-signature': signed(body) }) =>
  suite.api.request('POST', '/webhooks/processor', { headers: { 'content-type': 'application/json', ...headers }, body });

/** A USD 49.99 transaction of the suite's client, pending with its intent linked. */
const pending = (money = { amountMinor: 4999, currency: 'USD' }) => pendingTransaction(suite.partner.partnerId, clientId, money);

const succeeded = (tx: Transaction, id?: string) =>
  eventBody('payment_intent.succeeded', intentObject(tx.processorPaymentIntentId ?? '', tx.amountMinor, tx.currency.toLowerCase()), id);
const fullRefund = (tx: Transaction) =>
  eventBody('charge.refunded', refundedCharge(tx.processorPaymentIntentId ?? '', tx.amountMinor, tx.amountMinor, tx.currency.toLowerCase()));

const read = (tx: Transaction) => suite.api.read(suite.partner, `/transactions/${tx.svcTxId}`);

/** The cumulative level of a refund entry's key, as stored: 12 digits, so a payment's refund entries sort in order. */
const level = (minor: number) => String(minor).padStart(12, '0');

/**
 * The ledger entry item (decisions.md §5a) that reverses the whole USD 49.99 payment of the suite's client: its split
 * (1.45 processor, 1.80 platform of which 0.75 the service's, 46.74 net) negated to the unit, waiting for the next
 * batch in the settlement index under the payment's client, currency and creation, next to its sale.
 */
const wholeReversal = (tx: Transaction, type: 'refund' | 'chargeback', key: string, cause: string) => ({
  pk: `TX#${tx.svcTxId}`,
  sk: `ENTRY#${key}`,
  entity: 'ledgerEntry',
  type,
  key,
  cause,
  svcTxId: tx.svcTxId,
  partnerId: tx.partnerId,
  clientId: tx.clientId,
  partnerReference: tx.partnerReference,
  currency: 'USD',
  txCreatedAt: tx.createdAt,
  createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
  grossMinor: -4999,
  processorFeeMinor: -145,
  platformFeeMinor: -180,
  svcEarningMinor: -75,
  netMinor: -4674,
  settlementStatus: 'unsettled',
  gsi3pk: keys.settlementShardOf(tx.partnerId, tx.svcTxId),
  gsi3sk: `${tx.clientId}#USD#${tx.createdAt}#${tx.svcTxId}#${key}`,
});

describe('POST /webhooks/processor: refusals (decisions.md §3)', () => {
  it('answers 413 PAYLOAD_TOO_LARGE for a body far larger than any event, before verifying or parsing it', async () => {
    const body = JSON.stringify({ id: 'evt_big', type: 'payment_intent.succeeded', padding: 'x'.repeat(300 * 1024) });

    const response = await post(body);

    expect(response.status).toBe(413);
    expect(response.body).toEqual({ error: expect.any(String), code: 'PAYLOAD_TOO_LARGE' });
  });

  it('answers 400 PROCESSOR_SIGNATURE_MISSING without a signature header', async () => {
    const response = await post(succeeded(await pending()), {});

    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: expect.any(String), code: 'PROCESSOR_SIGNATURE_MISSING' });
  });

  it('answers 400 PROCESSOR_SIGNATURE_INVALID for a wrong secret, an altered body or an expired signature, and moves nothing', async () => {
    // Arrange
    const tx = await pending();
    const body = succeeded(tx);

    // Act
    const wrongSecret = await post(body, { 'processor-signature': signed(body, { secret: 'whsec_not_ours' }) });
    const altered = await post(body.replace(`"amount": ${tx.amountMinor}`, '"amount": 1'), { 'processor-signature': signed(body) });
    const expired = await post(body, { 'processor-signature': signed(body, { ageSeconds: 301 }) });

    // Assert
    for (const response of [wrongSecret, altered, expired]) {
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ error: expect.any(String), code: 'PROCESSOR_SIGNATURE_INVALID' });
    }
    expect((await read(tx)).body.status).toBe('pending');
  });

  it('answers 400 INVALID_WEBHOOK_JSON for a signed body that is not a JSON event (an unsigned one is refused first)', async () => {
    const notJson = '{"id": "evt_1", "type": "payment_intent.succeeded",';

    const signedGarbage = await post(notJson);
    const unsignedGarbage = await post(notJson, { 'processor-signature': 't=1,v1=00' });

    expect(signedGarbage.status).toBe(400);
    expect(signedGarbage.body.code).toBe('INVALID_WEBHOOK_JSON');
    expect(unsignedGarbage.body.code).toBe('PROCESSOR_SIGNATURE_INVALID');
  });

  it.each([
    ['an empty v1 (the SDK throws a plain Error for it)', 't=1,v1='],
    ['an empty t', 't=,v1=abc'],
    ['no t', 'v1=abc'],
    ['no v1', 't=1'],
    ['no key=value pairs at all', ',,,'],
    ['a long header (8 KB)', `t=1,v1=${'a'.repeat(8 * 1024)}`],
    ['Latin-1 bytes', 't=1,v1=\u00e9\u00ff'],
  ])('answers 400 PROCESSOR_SIGNATURE_INVALID (never INVALID_WEBHOOK_JSON) for a malformed stripe-signature: %s', async (_, header) => {
    // Arrange: a valid event and a body that is not JSON, neither signed by this header
    const tx = await pending();

    // Act
    const event = await post(succeeded(tx), { 'stripe-signature': header });
    const garbage = await post('{"id": "evt_1", "type": ', { 'stripe-signature': header });

    // Assert
    for (const response of [event, garbage]) {
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ error: expect.any(String), code: 'PROCESSOR_SIGNATURE_INVALID' });
    }
    expect((await read(tx)).body.status).toBe('pending');
  });

  it('answers 400 PROCESSOR_SIGNATURE_MISSING for an empty or blank stripe-signature, as for none', async () => {
    const body = succeeded(await pending());

    const empty = await post(body, { 'stripe-signature': '' });
    const blank = await post(body, { 'stripe-signature': '   ' });

    expect(empty.body).toEqual({ error: expect.any(String), code: 'PROCESSOR_SIGNATURE_MISSING' });
    expect(blank.body).toEqual({ error: expect.any(String), code: 'PROCESSOR_SIGNATURE_MISSING' });
    expect([empty.status, blank.status]).toEqual([400, 400]);
  });

  it('answers 400 PROCESSOR_SIGNATURE_INVALID for a huge signature header or one of odd Unicode (which only an event, not HTTP/1.1, can carry)', async () => {
    const handler = createHandler(processorEventDeps);
    const body = succeeded(await pending());

    const answers = await Promise.all(
      [`t=1,v1=${'f'.repeat(1024 * 1024)}`, 't=1,v1=\u00e9\u{1f600}', 't=\u0661,v1=abc', '\u202et=1,v1=abc', 't=1,v1=\ud800', '\u0000'].map((header) =>
        handler(httpEvent({ method: 'POST', path: '/api/v1/webhooks/processor', body, headers: { 'stripe-signature': header } }), lambdaContext()),
      ),
    );

    for (const answer of answers) {
      expect(answer.statusCode).toBe(400);
      expect(JSON.parse(answer.body ?? '')).toEqual({ error: expect.any(String), code: 'PROCESSOR_SIGNATURE_INVALID' });
    }
  });

  it('answers 400 MISSING_INTENT_ID for a mapped event that names no payment intent', async () => {
    const response = await post(eventBody('charge.dispute.created', { id: 'dp_1', object: 'dispute', amount: 100, currency: 'usd' }));

    expect(response.status).toBe(400);
    expect(response.body.code).toBe('MISSING_INTENT_ID');
  });

  it('answers 404 PAYMENT_INTENT_NOT_FOUND for an intent linked to no transaction', async () => {
    const response = await post(eventBody('payment_intent.succeeded', intentObject('pi_NotOursAtAll0001', 4999, 'usd')));

    expect(response.status).toBe(404);
    expect(response.body.code).toBe('PAYMENT_INTENT_NOT_FOUND');
  });

  it('answers 404 PAYMENT_INTENT_NOT_FOUND for an intent id no intent can have (5,000 characters), never a 500', async () => {
    const response = await post(eventBody('payment_intent.succeeded', intentObject(`pi_${'x'.repeat(5_000)}`, 4999, 'usd')));

    expect(response.status).toBe(404);
    expect(response.body.code).toBe('PAYMENT_INTENT_NOT_FOUND');
  });

  it('acknowledges an unmapped type with 200 and the message naming it, and moves nothing', async () => {
    const tx = await pending();

    const response = await post(eventBody('charge.succeeded', { id: 'ch_1', object: 'charge', payment_intent: tx.processorPaymentIntentId }));

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ message: 'Ignored event type charge.succeeded' });
    expect((await read(tx)).body.status).toBe('pending');
  });
});

describe('POST /webhooks/processor: the lifecycle (decisions.md §5, §6)', () => {
  it('moves a payment to succeeded with fees that sum exactly, indexes it for settlement and notifies the subscribed endpoint once', async () => {
    // Arrange: USD 49.99; processor 2.9 %, client fee 3 % + 0.30 flat, service fee 1.5 %
    const tx = await pending();

    // Act (with Stripe's own header name: the spec's is absent)
    const body = succeeded(tx);
    const response = await post(body, { 'stripe-signature': signed(body) });

    // Assert: the answer
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ received: true, svc_tx_id: tx.svcTxId, status: 'succeeded' });
    // Assert: the fee fields (decisions.md §6), in major units
    const read1 = (await read(tx)).body;
    expect(read1).toMatchObject({
      status: 'succeeded',
      settlementStatus: 'unsettled',
      amount: 49.99,
      processorFeePercent: 2.9,
      partnerFeePercent: 3,
      svcEarningPercent: 1.5,
      partnerPayoutPercent: 1.5,
      processorFee: 1.45, // 144.971 -> 145
      platformFee: 1.8, // 149.97 -> 150, + 30
      svcEarningAmount: 0.75, // 74.985 -> 75
      netAmount: 46.74,
    });
    expect(Math.round(read1.processorFee * 100) + Math.round(read1.platformFee * 100) + Math.round(read1.netAmount * 100)).toBe(4999);
    // Assert: waiting for settlement (sparse gsi3), under its client and currency
    expect(await rawItem(keys.transaction(tx.svcTxId))).toMatchObject(
      keys.settlementIndex(tx.partnerId, tx.clientId, tx.currency, tx.createdAt, tx.svcTxId),
    );
    // Assert: one delivery, to the endpoint subscribed to transaction_succeeded, with the spec's body
    const deliveries = await deliveriesOf(tx.partnerId, tx.svcTxId);
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({ endpointId: endpoints.main, event: 'transaction_succeeded', status: 'pending', attempts: 0, eventId: expect.stringMatching(/^evt_/) });
    expect(JSON.parse(deliveries[0]?.payload ?? '')).toEqual({
      event: 'transaction_succeeded',
      svc_tx_id: tx.svcTxId,
      partner_id: tx.partnerId,
      client_id: tx.clientId,
      partner_reference: tx.partnerReference,
      status: 'succeeded',
      amount: 49.99,
      currency: 'USD',
      meta: { order: 42 },
    });
  });

  it('applies the same event 5 times (at once) as one move: one delivery, one processed-event record, every answer 200 succeeded', async () => {
    // Arrange
    const tx = await pending();
    const body = succeeded(tx);
    const eventId = (JSON.parse(body) as { id: string }).id;

    // Act
    const responses = await Promise.all(Array.from({ length: 5 }, () => post(body)));

    // Assert
    for (const response of responses) expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: { received: true, svc_tx_id: tx.svcTxId, status: 'succeeded' } });
    expect(await deliveriesOf(tx.partnerId, tx.svcTxId)).toHaveLength(1);
    expect(await rawItem(keys.processorEvent(eventId))).toMatchObject({ svcTxId: tx.svcTxId, fromStatus: 'pending', toStatus: 'succeeded', expiresAt: expect.any(Number) });
    const record = await rawItem(keys.processorEvent(eventId));
    expect((record?.expiresAt as number) - Date.now() / 1000).toBeGreaterThan(29 * 24 * 3600);
  });

  it('applies an event id once: one already recorded as processed moves nothing, even where its move is allowed', async () => {
    // Arrange: the event was applied before (its record outlives any state the transaction is in)
    const tx = await pending();
    const body = succeeded(tx);
    const eventId = (JSON.parse(body) as { id: string }).id;
    await documentClient.send(new PutCommand({ TableName: tableName, Item: { ...keys.processorEvent(eventId), entity: 'processorEvent', eventId } }));

    // Act
    const response = await post(body);

    // Assert
    expect(response.body).toEqual({ received: true, svc_tx_id: tx.svcTxId, status: 'pending' });
    expect((await read(tx)).body.status).toBe('pending');
    expect(await deliveriesOf(tx.partnerId, tx.svcTxId)).toEqual([]);
  });

  it('refunds fully (the sale stays in the settlement index, a refund entry reverses it exactly), and a succeeded event arriving after the refund changes nothing and notifies nobody', async () => {
    // Arrange
    const tx = await pending();
    await post(succeeded(tx));
    const charge = refundedCharge(tx.processorPaymentIntentId ?? '', tx.amountMinor, tx.amountMinor, 'usd');

    // Act
    const refund = await post(eventBody('charge.refunded', charge));
    const late = await post(succeeded(tx));

    // Assert: the answers
    expect(refund.body).toEqual({ received: true, svc_tx_id: tx.svcTxId, status: 'refunded' });
    expect(late.status).toBe(200);
    expect(late.body).toEqual({ received: true, svc_tx_id: tx.svcTxId, status: 'refunded' });
    // Assert: the split is kept, the refund shown
    expect((await read(tx)).body).toMatchObject({
      status: 'refunded',
      settlementStatus: 'unsettled',
      netAmount: 46.74,
      refundedAmount: 49.99,
      disputedAmount: 0,
      disputeStatus: null,
    });
    // Assert: the sale still waits for settlement (decisions.md §5a: it is settled beside its reversal), no legacy adjustment
    const item = await rawItem(keys.transaction(tx.svcTxId));
    expect(item).toMatchObject({ gsi3pk: keys.settlementShardOf(tx.partnerId, tx.svcTxId), gsi3sk: `${tx.clientId}#USD#${tx.createdAt}#${tx.svcTxId}` });
    expect(await rawItem(keys.adjustment(tx.svcTxId, 'refund'))).toBeUndefined();
    // Assert: exactly one entry, the whole payment reversed (the late success wrote none)
    expect(await entriesOf(tx.svcTxId)).toEqual([wholeReversal(tx, 'refund', `refund#${level(4999)}`, charge.id)]);
    expect((await deliveriesOf(tx.partnerId, tx.svcTxId)).map((delivery) => delivery.event).sort()).toEqual(['transaction_refunded', 'transaction_succeeded']);
  });

  it('lets a failed payment succeed on a retry (failed -> succeeded), notifying each move`s subscribers', async () => {
    // Arrange
    const tx = await pending();
    const failedEvent = eventBody('payment_intent.payment_failed', intentObject(tx.processorPaymentIntentId ?? '', 4999, 'usd', 'requires_payment_method'));

    // Act
    const failed = await post(failedEvent);
    const readAfterFailure = (await read(tx)).body;
    const retried = await post(succeeded(tx));

    // Assert
    expect(failed.body.status).toBe('failed');
    expect(readAfterFailure).toMatchObject({ status: 'failed', processorFee: null, netAmount: null });
    expect(retried.body.status).toBe('succeeded');
    expect((await read(tx)).body).toMatchObject({ status: 'succeeded', netAmount: 46.74 });
    const deliveries = await deliveriesOf(tx.partnerId, tx.svcTxId);
    expect(deliveries.map(({ event, endpointId }) => ({ event, endpointId })).sort((a, b) => a.event.localeCompare(b.event))).toEqual([
      { event: 'transaction_failed', endpointId: endpoints.failures },
      { event: 'transaction_succeeded', endpointId: endpoints.main },
    ]);
    expect(new Set(deliveries.map((delivery) => delivery.eventId)).size).toBe(2);
  });

  it('moves a canceled intent to abandoned, and nothing out of abandoned afterwards', async () => {
    const tx = await pending();

    const canceled = await post(eventBody('payment_intent.canceled', intentObject(tx.processorPaymentIntentId ?? '', 4999, 'usd', 'canceled')));
    const late = await post(succeeded(tx));

    expect(canceled.body.status).toBe('abandoned');
    expect(late.body.status).toBe('abandoned');
    expect((await deliveriesOf(tx.partnerId, tx.svcTxId)).map((delivery) => [delivery.event, delivery.endpointId])).toEqual([['transaction_abandoned', endpoints.abandonments]]);
  });

  it('answers a partial refund with the current status, moving and sending nothing', async () => {
    const tx = await pending();
    await post(succeeded(tx));

    const partial = await post(eventBody('charge.refunded', refundedCharge(tx.processorPaymentIntentId ?? '', 4999, 1000, 'usd')));

    expect(partial.status).toBe(200);
    expect(partial.body).toEqual({ received: true, svc_tx_id: tx.svcTxId, status: 'succeeded' });
    expect((await read(tx)).body.status).toBe('succeeded');
    expect((await deliveriesOf(tx.partnerId, tx.svcTxId)).map((delivery) => delivery.event)).toEqual(['transaction_succeeded']);
  });

  it('charges back a succeeded payment by the dispute`s payment_intent', async () => {
    const tx = await pending();
    await post(succeeded(tx));

    const response = await post(eventBody('charge.dispute.created', dispute(tx.processorPaymentIntentId ?? '', 4999, 'usd')));

    expect(response.body).toEqual({ received: true, svc_tx_id: tx.svcTxId, status: 'chargeback' });
    expect((await deliveriesOf(tx.partnerId, tx.svcTxId)).map((delivery) => delivery.event).sort()).toEqual(['transaction_chargeback', 'transaction_succeeded']);
  });

  it('answers an event whose amount or currency is not the transaction`s with 200 and the current status, moving nothing', async () => {
    const tx = await pending();

    const wrongAmount = await post(eventBody('payment_intent.succeeded', intentObject(tx.processorPaymentIntentId ?? '', 4998, 'usd')));
    const wrongCurrency = await post(eventBody('payment_intent.succeeded', intentObject(tx.processorPaymentIntentId ?? '', 4999, 'eur')));
    const unknownCurrency = await post(eventBody('payment_intent.succeeded', intentObject(tx.processorPaymentIntentId ?? '', 4999, 'qqq')));

    for (const response of [wrongAmount, wrongCurrency, unknownCurrency]) {
      expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: { received: true, svc_tx_id: tx.svcTxId, status: 'pending' } });
    }
    expect(await deliveriesOf(tx.partnerId, tx.svcTxId)).toEqual([]);
  });

  it('reads a zero-decimal currency`s amount in Stripe`s units (JPY 5000 is 5000 at both)', async () => {
    const tx = await pending({ amountMinor: 5000, currency: 'JPY' });

    const response = await post(eventBody('payment_intent.succeeded', intentObject(tx.processorPaymentIntentId ?? '', 5000, 'jpy')));

    expect(response.body.status).toBe('succeeded');
    // No flat fee outside USD: 3 % of 5000 = 150; processor 145; net 4705
    expect((await read(tx)).body).toMatchObject({ currency: 'JPY', processorFee: 145, platformFee: 150, netAmount: 4705 });
  });
});

describe('POST /webhooks/processor: refunds and chargebacks after settlement (decisions.md §5a)', () => {
  const settledCases: Array<['queued' | 'paid', 'refund' | 'chargeback']> = [
    ['queued', 'refund'],
    ['paid', 'chargeback'],
  ];
  it.each(settledCases)('keeps a %s transaction`s settlementStatus and writes a negative %s entry waiting for the next batch', async (settlementStatus, kind) => {
    // Arrange: succeeded, then taken by a settlement batch
    const tx = await pending();
    await post(succeeded(tx));
    await markSettled(tx.svcTxId, settlementStatus);
    const charge = refundedCharge(tx.processorPaymentIntentId ?? '', 4999, 4999, 'usd');
    const disputed = dispute(tx.processorPaymentIntentId ?? '', 4999, 'usd');

    // Act
    const response = await post(kind === 'refund' ? eventBody('charge.refunded', charge) : eventBody('charge.dispute.created', disputed));

    // Assert: moved, settlement status kept, the reversal shown
    expect(response.body.status).toBe(kind === 'refund' ? 'refunded' : 'chargeback');
    expect((await read(tx)).body).toMatchObject(
      kind === 'refund'
        ? { settlementStatus, refundedAmount: 49.99, disputedAmount: 0, disputeStatus: null }
        : { settlementStatus, refundedAmount: 0, disputedAmount: 49.99, disputeStatus: 'needs_response' },
    );
    // Assert: the batched sale is not put back in the settlement index, and no legacy adjustment is written
    const item = await rawItem(keys.transaction(tx.svcTxId));
    expect(item?.gsi3pk).toBeUndefined();
    expect(item?.gsi3sk).toBeUndefined();
    expect(await rawItem(keys.adjustment(tx.svcTxId, kind))).toBeUndefined();
    // Assert: one entry, the whole payment reversed, waiting in the settlement index under the same client and currency
    const key = kind === 'refund' ? `refund#${level(4999)}` : `chargeback#${disputed.id}`;
    expect(await entriesOf(tx.svcTxId)).toEqual([wholeReversal(tx, kind, key, kind === 'refund' ? charge.id : disputed.id)]);
    expect((await deliveriesOf(tx.partnerId, tx.svcTxId)).map((delivery) => delivery.event).sort()).toEqual([`transaction_${kind === 'refund' ? 'refunded' : 'chargeback'}`, 'transaction_succeeded'].sort());
  });

  it('is not disturbed by a settlement run between its read and its write (a batch changes neither status nor revision): one write, the refund entry waits for the next batch', async () => {
    // Arrange: a handler whose write finds the transaction batched meanwhile (as a settlement run would)
    const tx = await pending();
    await post(succeeded(tx));
    const outcomes: string[] = [];
    const racing = createHandler({
      ...processorEventDeps,
      payments: {
        writePaymentUpdate: async (write) => {
          if (outcomes.length === 0) await markSettled(tx.svcTxId, 'queued');
          const outcome = await processorEventDeps.payments.writePaymentUpdate(write);
          outcomes.push(outcome);
          return outcome;
        },
      },
    });
    const charge = refundedCharge(tx.processorPaymentIntentId ?? '', 4999, 4999, 'usd');
    const body = eventBody('charge.refunded', charge);

    // Act
    const response = await racing(httpEvent({ method: 'POST', path: '/api/v1/webhooks/processor', body, headers: { 'processor-signature': signed(body) } }), lambdaContext());

    // Assert
    expect(outcomes).toEqual(['applied']);
    expect(JSON.parse(response.body ?? '')).toEqual({ received: true, svc_tx_id: tx.svcTxId, status: 'refunded' });
    expect((await read(tx)).body).toMatchObject({ status: 'refunded', settlementStatus: 'queued', refundedAmount: 49.99 });
    expect((await rawItem(keys.transaction(tx.svcTxId)))?.gsi3pk).toBeUndefined();
    expect(await entriesOf(tx.svcTxId)).toEqual([wholeReversal(tx, 'refund', `refund#${level(4999)}`, charge.id)]);
    expect((await deliveriesOf(tx.partnerId, tx.svcTxId)).filter((delivery) => delivery.event === 'transaction_refunded')).toHaveLength(1);
  });

  it('after losing a race to another event between its read and its write, decides again from what that event recorded: the two refund steps reverse the payment exactly', async () => {
    // Arrange: a handler whose first write finds a partial refund (10.00 of 49.99) applied meanwhile by another event
    const tx = await pending();
    await post(succeeded(tx));
    const outcomes: string[] = [];
    const partial = refundedCharge(tx.processorPaymentIntentId ?? '', 4999, 1000, 'usd');
    const racing = createHandler({
      ...processorEventDeps,
      payments: {
        writePaymentUpdate: async (write) => {
          if (outcomes.length === 0) expect((await post(eventBody('charge.refunded', partial))).body).toEqual({ received: true, svc_tx_id: tx.svcTxId, status: 'succeeded' });
          const outcome = await processorEventDeps.payments.writePaymentUpdate(write);
          outcomes.push(outcome);
          return outcome;
        },
      },
    });
    const full = refundedCharge(tx.processorPaymentIntentId ?? '', 4999, 4999, 'usd');
    const body = eventBody('charge.refunded', full);

    // Act
    const response = await racing(httpEvent({ method: 'POST', path: '/api/v1/webhooks/processor', body, headers: { 'processor-signature': signed(body) } }), lambdaContext());

    // Assert: the first write lost (nothing written), the second applied the rest of the refund
    expect(outcomes).toEqual(['conflict', 'applied']);
    expect(JSON.parse(response.body ?? '')).toEqual({ received: true, svc_tx_id: tx.svcTxId, status: 'refunded' });
    expect((await read(tx)).body).toMatchObject({ status: 'refunded', settlementStatus: 'unsettled', refundedAmount: 49.99 });
    // Assert: the step (0, 10.00] reverses round_half_up(X × 1000 / 4999) of each term; the step (10.00, 49.99] the rest
    const whole = wholeReversal(tx, 'refund', `refund#${level(4999)}`, full.id);
    const first = { grossMinor: -1000, processorFeeMinor: -29, platformFeeMinor: -36, svcEarningMinor: -15, netMinor: -935 }; // 29.006, 36.007, 15.003
    expect(await entriesOf(tx.svcTxId)).toEqual([
      { ...wholeReversal(tx, 'refund', `refund#${level(1000)}`, partial.id), ...first },
      { ...whole, grossMinor: -3999, processorFeeMinor: -116, platformFeeMinor: -144, svcEarningMinor: -60, netMinor: -3739 },
    ]);
    // Assert: one partner event for the move (the main endpoint does not take transaction_partially_refunded)
    expect((await deliveriesOf(tx.partnerId, tx.svcTxId)).map((delivery) => delivery.event).sort()).toEqual(['transaction_refunded', 'transaction_succeeded']);
  });

  /** `count` endpoints of the partner subscribed to transaction_succeeded only (the admin API allows 20: this guards the write itself). */
  const subscribers = (partnerId: string, count: number) =>
    Array.from({ length: count }, (_, i) => ({
      id: `whe_${i}`,
      partnerId,
      name: `endpoint ${i}`,
      url: 'https://partner.example/webhooks',
      events: ['transaction_succeeded' as const],
      createdAt: new Date().toISOString(),
    }));
  const crowdedBy = (count: number, partnerId: string) =>
    createHandler({ ...processorEventDeps, webhookEndpoints: { listWebhookEndpoints: async () => subscribers(partnerId, count) } });
  const sendTo = (handler: ReturnType<typeof createHandler>, body: string) =>
    handler(httpEvent({ method: 'POST', path: '/api/v1/webhooks/processor', body, headers: { 'processor-signature': signed(body) } }), lambdaContext());

  it('refuses, writing nothing, a write of more items than one DynamoDB transaction holds (100: event record, transaction, new entries, deliveries)', async () => {
    // Arrange: a plain success to 98 endpoints is 100 items; to 99, 101. A success that applies a refund recorded
    // before it (decisions.md §5a) carries its refund entry too: to 98 endpoints, 101 items.
    const [fits, tooMany, withEntry] = [await pending(), await pending(), await pending()];
    const recorded = await post(fullRefund(withEntry));
    expect(recorded.body).toEqual({ received: true, svc_tx_id: withEntry.svcTxId, status: 'pending' });
    const [fitsBody, tooManyBody, withEntryBody] = [succeeded(fits), succeeded(tooMany), succeeded(withEntry)];

    // Act
    const fitting = await sendTo(crowdedBy(98, fits.partnerId), fitsBody);
    const refused = await sendTo(crowdedBy(99, tooMany.partnerId), tooManyBody);
    const refusedWithEntry = await sendTo(crowdedBy(98, withEntry.partnerId), withEntryBody);

    // Assert: 100 items are written, as one
    expect(fitting.statusCode).toBe(200);
    expect((await read(fits)).body.status).toBe('succeeded');
    expect(await deliveriesOf(fits.partnerId, fits.svcTxId)).toHaveLength(98);
    // Assert: 101 are refused with a 500 (the processor retries), and nothing of the update is written
    for (const [response, tx, body] of [[refused, tooMany, tooManyBody], [refusedWithEntry, withEntry, withEntryBody]] as const) {
      expect(response.statusCode).toBe(500);
      expect((await read(tx)).body).toMatchObject({ status: 'pending', processorFee: null, netAmount: null });
      expect(await deliveriesOf(tx.partnerId, tx.svcTxId)).toEqual([]);
      expect(await entriesOf(tx.svcTxId)).toEqual([]);
      expect(await rawItem(keys.processorEvent((JSON.parse(body) as { id: string }).id))).toBeUndefined();
      expect((await rawItem(keys.transaction(tx.svcTxId)))?.gsi3pk).toBeUndefined();
    }
    // Assert: the refund recorded before stays recorded, for the success's retry to apply
    expect((await read(withEntry)).body).toMatchObject({ refundedAmount: 49.99 });
  });

  it('writes nothing at all when the atomic write fails: no move, no record, no delivery (the processor retries)', async () => {
    // Arrange: a write that fails outright
    const tx = await pending();
    const failing = createHandler({ ...processorEventDeps, payments: { writePaymentUpdate: async () => Promise.reject(new Error('injected: DynamoDB unavailable')) } });
    const body = succeeded(tx);
    const eventId = (JSON.parse(body) as { id: string }).id;

    // Act
    const failed = await sendTo(failing, body);
    const afterFailure = { read: (await read(tx)).body, record: await rawItem(keys.processorEvent(eventId)), deliveries: await deliveriesOf(tx.partnerId, tx.svcTxId) };
    const retried = await post(body);

    // Assert: a 500 (the processor retries) that left nothing behind
    expect(failed.statusCode).toBe(500);
    expect(afterFailure.read).toMatchObject({ status: 'pending', processorFee: null });
    expect(afterFailure.record).toBeUndefined();
    expect(afterFailure.deliveries).toEqual([]);
    // Assert: then the retry applies it once
    expect(retried.body.status).toBe('succeeded');
    expect(await rawItem(keys.processorEvent(eventId))).toBeDefined();
    expect(await deliveriesOf(tx.partnerId, tx.svcTxId)).toHaveLength(1);
  });
});
