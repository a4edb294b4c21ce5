import { createHmac } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { currencyCode } from '../../../lib/domain/money';
import type { Transaction } from '../../../lib/domain/transaction';
import { isDelivered, PARTNER_EVENTS, partnerEventBody, retryDelayMs } from '../../../lib/domain/webhooks';
import { PartnerWebhookBody } from '../../../lib/http/response-schemas';
import { generateWebhookSecret, standardSignature, svcSignature, webhookHeaders } from '../../../lib/webhooks/signing';

/** A fixed vector, its expected values computed outside Node (openssl dgst -sha256 -hmac / -macopt hexkey). */
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  eventId: 'evt_test',
  timestamp: 1_700_000_000,
  body: '{"event":"transaction_succeeded","svc_tx_id":"svc_tx_0123456789abcdefghjkmnpq","amount":12.34}',
  svcSignature: 'b5e14218ed6faa7d19f4a910cc24ff773e712fd8e79f296159155f5b980621e4',
  standardSignature: 'v1,1RvblM2t9WejEOR9kGpAKS7dNfk+nw7XJXtOdayhU9w=',
};

const body = JSON.stringify({
  event: 'transaction_succeeded',
  svc_tx_id: 'svc_tx_abc',
  partner_id: 'ptr_1',
  client_id: 'merchant-1',
  partner_reference: 'order-1',
  status: 'succeeded',
  amount: 12.34,
  currency: 'USD',
  meta: { note: 'ünïcödé' },
});

describe('webhook signatures', () => {
  it('matches the fixed vector for both signatures', () => {
    expect(svcSignature(VECTOR.secret, VECTOR.body)).toBe(VECTOR.svcSignature);
    expect(standardSignature(VECTOR.secret, VECTOR.eventId, VECTOR.timestamp, VECTOR.body)).toBe(VECTOR.standardSignature);
  });

  it('signs exactly as the standardwebhooks package does, and its verifier accepts our headers', () => {
    const secret = generateWebhookSecret();
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = webhookHeaders(secret, { eventId: 'evt_1', body, timestamp });
    const partner = new Webhook(secret);

    expect(headers['webhook-signature']).toBe(partner.sign('evt_1', new Date(timestamp * 1000), body));
    expect(partner.verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('is refused by the standardwebhooks verifier when the body, the id or the secret differ', () => {
    const secret = generateWebhookSecret();
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = webhookHeaders(secret, { eventId: 'evt_1', body, timestamp });

    expect(() => new Webhook(secret).verify(body.replace('12.34', '99.99'), headers)).toThrow();
    expect(() => new Webhook(secret).verify(body, { ...headers, 'webhook-id': 'evt_2' })).toThrow();
    expect(() => new Webhook(generateWebhookSecret()).verify(body, headers)).toThrow();
  });

  it('sends X-Svc-Signature as the lowercase hex HMAC-SHA256 of the exact body keyed by the whole secret string', () => {
    const secret = generateWebhookSecret();
    const headers = webhookHeaders(secret, { eventId: 'evt_1', body, timestamp: 1_700_000_000 });

    expect(headers['X-Svc-Signature']).toBe(createHmac('sha256', secret).update(body).digest('hex'));
    expect(headers['X-Svc-Signature']).toMatch(/^[0-9a-f]{64}$/);
  });

  it('carries the event id and the unix-seconds timestamp in both header families, and the JSON content type', () => {
    const headers = webhookHeaders(generateWebhookSecret(), { eventId: 'evt_abc', body, timestamp: 1_700_000_123 });

    expect(headers).toMatchObject({
      'Content-Type': 'application/json',
      'X-Svc-Event-Id': 'evt_abc',
      'X-Svc-Timestamp': '1700000123',
      'webhook-id': 'evt_abc',
      'webhook-timestamp': '1700000123',
    });
  });

  it('makes secrets of whsec_ + base64 of 32 random bytes, each different', () => {
    const secrets = [generateWebhookSecret(), generateWebhookSecret()];

    for (const secret of secrets) {
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    }
    expect(secrets[0]).not.toBe(secrets[1]);
  });
});

describe('the retry schedule', () => {
  it('waits base × 1 after the first failure and base × 4 after the second, exactly, whatever the base', () => {
    expect(retryDelayMs(1, 1000, 0.5)).toBe(1000);
    expect(retryDelayMs(2, 1000, 0.5)).toBe(4000);
    expect(retryDelayMs(1, 100, 0.5)).toBe(100);
    expect(retryDelayMs(2, 100, 0.5)).toBe(400);
    expect(retryDelayMs(2, 60_000, 0.5)).toBe(240_000);
  });

  it('jitters within ±20 %, never below 1 ms', () => {
    expect(retryDelayMs(2, 10_000, 0)).toBe(32_000);
    expect(retryDelayMs(2, 10_000, 0.999_999)).toBe(48_000);
    expect(retryDelayMs(1, 1, 0)).toBe(1);
    const spread = new Set(Array.from({ length: 50 }, (_, i) => retryDelayMs(2, 10_000, i / 50)));
    expect(spread.size).toBe(50);
  });

  it('counts only a 2xx as delivered', () => {
    expect([200, 201, 204, 299].every(isDelivered)).toBe(true);
    expect([199, 301, 302, 304, 400, 500].some(isDelivered)).toBe(false);
  });
});

describe('the partner webhook body', () => {
  const transaction = (overrides: Partial<Transaction>) =>
    ({ svcTxId: 'svc_tx_0f3k9m2p7q8r1s4t5v6w7x8y', partnerId: 'ptr_0f3k9m2p7q8r1s4t5v6w7x8y', clientId: 'shop-1', partnerReference: 'order-1', amountMinor: 4999, currency: 'USD', meta: null, ...overrides }) as Transaction;
  const SPEC_FIELDS = ['event', 'svc_tx_id', 'partner_id', 'client_id', 'partner_reference', 'status', 'amount', 'currency', 'meta'];

  it("is the documented PartnerWebhookBody (the OpenAPI document's webhooks) for every event, currency and meta", () => {
    const cases = [
      partnerEventBody(transaction({}), { event: 'transaction_succeeded', status: 'succeeded' }),
      partnerEventBody(transaction({ amountMinor: 1500, currency: currencyCode('JPY'), meta: { cart: 'c-1', nested: { n: 1 } } }), { event: 'transaction_refunded', status: 'refunded' }),
      partnerEventBody(transaction({}), { event: 'transaction_partially_refunded', status: 'succeeded', refundedMinor: 1234 }),
      partnerEventBody(transaction({ amountMinor: 1500, currency: currencyCode('JPY') }), { event: 'transaction_partially_refunded', status: 'succeeded', refundedMinor: 500 }),
      partnerEventBody(transaction({}), { event: 'transaction_dispute_closed', status: 'chargeback', disputeStatus: 'won' }),
      partnerEventBody(transaction({}), { event: 'transaction_dispute_closed', status: 'chargeback', disputeStatus: 'lost' }),
      ...PARTNER_EVENTS.map((event) => partnerEventBody(transaction({}), { event, status: 'failed' })),
    ];

    for (const body of cases) expect(PartnerWebhookBody.safeParse(JSON.parse(body)).error).toBeUndefined();
    expect(JSON.parse(cases[0]!)).toMatchObject({ amount: 49.99, currency: 'USD', meta: {} });
    expect(JSON.parse(cases[1]!)).toMatchObject({ amount: 1500, currency: 'JPY' });
  });

  it('offers the five status events and the two opt-in events of the ledger', () => {
    expect([...PARTNER_EVENTS].sort()).toEqual(
      [
        'transaction_succeeded',
        'transaction_failed',
        'transaction_abandoned',
        'transaction_refunded',
        'transaction_chargeback',
        'transaction_partially_refunded',
        'transaction_dispute_closed',
      ].sort(),
    );
  });

  it('is exactly the spec`s fields for a status event: no refunded_amount or dispute_status unless the notice gives one', () => {
    const body = JSON.parse(partnerEventBody(transaction({ meta: { note: 'x' } }), { event: 'transaction_refunded', status: 'refunded' }));

    expect(Object.keys(body)).toEqual(SPEC_FIELDS);
    expect(body).toEqual({
      event: 'transaction_refunded',
      svc_tx_id: 'svc_tx_0f3k9m2p7q8r1s4t5v6w7x8y',
      partner_id: 'ptr_0f3k9m2p7q8r1s4t5v6w7x8y',
      client_id: 'shop-1',
      partner_reference: 'order-1',
      status: 'refunded',
      amount: 49.99,
      currency: 'USD',
      meta: { note: 'x' },
    });
  });

  it('adds the cumulative refunded_amount in major units to a partial refund, and dispute_status to a closed dispute', () => {
    const partial = JSON.parse(partnerEventBody(transaction({}), { event: 'transaction_partially_refunded', status: 'succeeded', refundedMinor: 1234 }));
    const partialJpy = JSON.parse(partnerEventBody(transaction({ amountMinor: 1500, currency: currencyCode('JPY') }), { event: 'transaction_partially_refunded', status: 'succeeded', refundedMinor: 500 }));
    const closed = JSON.parse(partnerEventBody(transaction({}), { event: 'transaction_dispute_closed', status: 'chargeback', disputeStatus: 'won' }));

    expect(Object.keys(partial)).toEqual([...SPEC_FIELDS, 'refunded_amount']);
    expect(partial).toMatchObject({ event: 'transaction_partially_refunded', status: 'succeeded', amount: 49.99, refunded_amount: 12.34 });
    expect(partialJpy).toMatchObject({ amount: 1500, refunded_amount: 500, currency: 'JPY' });
    expect(Object.keys(closed)).toEqual([...SPEC_FIELDS, 'dispute_status']);
    expect(closed).toMatchObject({ event: 'transaction_dispute_closed', status: 'chargeback', dispute_status: 'won' });
  });

  it('is held to exactly its fields: one more is refused', () => {
    const body = { ...JSON.parse(partnerEventBody(transaction({}), { event: 'transaction_succeeded', status: 'succeeded' })), fee: 1 };

    expect(PartnerWebhookBody.safeParse(body).success).toBe(false);
  });
});
