/**
 * Inbound processor events at the Stripe adapter: the signature verified Stripe's way (signed here exactly as the
 * sandbox processor signs), then the event mapped to the service's terms (decisions.md §5).
 */
import { describe, expect, it } from '@jest/globals';
import { signatureHeader } from '../../infra/local/processor-sandbox-events';
import { verifyStripeEvent, toProcessorEvent } from '../../lib/processor/events';

const SECRET = 'whsec_unit_events';
const NOW_MS = Date.parse('2026-03-01T12:00:00Z');
const nowSeconds = Math.floor(NOW_MS / 1000);

/** A body signed as the sandbox (and Stripe) sign it, `ageSeconds` ago. */
const signed = (body: string, ageSeconds = 0, secret = SECRET) => ({ body, header: signatureHeader(secret, body, nowSeconds - ageSeconds) });

const event = (type: string, object: Record<string, unknown>) => JSON.stringify({ id: 'evt_1', object: 'event', type, data: { object } }, null, 2);

const verify = (body: string, header: string | undefined, secret: { webhookSecret: string | undefined } = { webhookSecret: SECRET }) => () =>
  verifyStripeEvent(body, header, secret.webhookSecret, NOW_MS);

describe('verifyStripeEvent', () => {
  it('accepts a body signed with the webhook secret within 300 s, and reads it', () => {
    const { body, header } = signed(event('payment_intent.succeeded', { id: 'pi_123', amount: 4999, currency: 'eur' }), 299);

    expect(verify(body, header)()).toEqual({
      kind: 'transaction',
      id: 'evt_1',
      type: 'payment_intent.succeeded',
      status: 'succeeded',
      paymentIntentId: 'pi_123',
      money: { readable: true, currency: 'EUR', amountMinor: 4999 },
    });
  });

  it('refuses a missing or blank header with PROCESSOR_SIGNATURE_MISSING, before anything else', () => {
    expect(verify('{}', undefined, { webhookSecret: undefined })).toThrow(expect.objectContaining({ status: 400, code: 'PROCESSOR_SIGNATURE_MISSING' }));
    expect(verify('{}', '  ')).toThrow(expect.objectContaining({ status: 400, code: 'PROCESSOR_SIGNATURE_MISSING' }));
  });

  it('refuses a wrong secret, an altered body, an expired timestamp and a malformed header with PROCESSOR_SIGNATURE_INVALID', () => {
    const body = event('payment_intent.succeeded', { id: 'pi_123', amount: 4999, currency: 'eur' });
    const invalid = expect.objectContaining({ status: 400, code: 'PROCESSOR_SIGNATURE_INVALID' });

    expect(verify(body, signed(body, 0, 'whsec_other').header)).toThrow(invalid);
    expect(verify(body.replace('4999', '1'), signed(body).header)).toThrow(invalid);
    expect(verify(body, signed(body, 301).header)).toThrow(invalid);
    expect(verify(body, signed(body, -301).header)).toThrow(invalid); // dated in the future: replayable until then
    expect(verify(body, signed(body, -299).header)).not.toThrow(); // a processor clock slightly ahead
    expect(verify(body, 'v1=deadbeef')).toThrow(invalid);
    expect(verify('', signed('x').header)).toThrow(invalid);
  });

  it('checks the signature before the JSON: unsigned garbage is an invalid signature, signed garbage is INVALID_WEBHOOK_JSON', () => {
    const garbage = '{"id": "evt_1", "type": ';
    const notAnEvent = ['', ' ', '"text"', 'null', '[1]', '{"type":"payment_intent.succeeded"}', '{"id":"evt_1"}'];

    expect(verify(garbage, 't=1,v1=00')).toThrow(expect.objectContaining({ code: 'PROCESSOR_SIGNATURE_INVALID' }));
    expect(verify(garbage, signed(garbage).header)).toThrow(expect.objectContaining({ status: 400, code: 'INVALID_WEBHOOK_JSON' }));
    for (const body of notAnEvent) expect(verify(body, signed(body).header)).toThrow(expect.objectContaining({ code: 'INVALID_WEBHOOK_JSON' }));
    // An empty body is verified like any other: unsigned (or signed for other bytes) it is an invalid signature.
    expect(verify('', 't=1,v1=00')).toThrow(expect.objectContaining({ code: 'PROCESSOR_SIGNATURE_INVALID' }));
    expect(verify('', signed('', 301).header)).toThrow(expect.objectContaining({ code: 'PROCESSOR_SIGNATURE_INVALID' }));
  });

  it('answers a service without a webhook secret with 500 PROCESSOR_WEBHOOK_SECRET_MISSING (the processor retries)', () => {
    const { body, header } = signed(event('payment_intent.succeeded', { id: 'pi_1' }));

    expect(verify(body, header, { webhookSecret: undefined })).toThrow(expect.objectContaining({ status: 500, code: 'PROCESSOR_WEBHOOK_SECRET_MISSING' }));
  });
});

describe('toProcessorEvent (decisions.md §5)', () => {
  it.each([
    ['payment_intent.succeeded', 'succeeded'],
    ['payment_intent.payment_failed', 'failed'],
    ['payment_intent.canceled', 'abandoned'],
  ])('maps %s to %s, with the intent itself as the payment intent', (type, status) => {
    expect(toProcessorEvent('evt_1', type, { id: 'pi_9', amount: 1000, currency: 'usd' })).toMatchObject({
      kind: 'transaction',
      status,
      paymentIntentId: 'pi_9',
      money: { readable: true, currency: 'USD', amountMinor: 1000 },
    });
  });

  it('maps a full refund to refunded and a partial one to no status, by the charge`s payment_intent', () => {
    const charge = { id: 'ch_1', object: 'charge', payment_intent: 'pi_9', amount: 1000, amount_refunded: 1000, currency: 'usd', refunded: true };

    expect(toProcessorEvent('evt_1', 'charge.refunded', charge)).toMatchObject({ status: 'refunded', paymentIntentId: 'pi_9', money: { amountMinor: 1000 } });
    expect(toProcessorEvent('evt_1', 'charge.refunded', { ...charge, amount_refunded: 400, refunded: false })).toMatchObject({ status: null, paymentIntentId: 'pi_9' });
  });

  it('maps a dispute to chargeback by its payment_intent, checking its currency but not its (possibly partial) amount', () => {
    const dispute = { id: 'dp_1', object: 'dispute', payment_intent: 'pi_9', charge: 'ch_1', amount: 400, currency: 'jpy' };

    expect(toProcessorEvent('evt_1', 'charge.dispute.created', dispute)).toMatchObject({
      status: 'chargeback',
      paymentIntentId: 'pi_9',
      money: { readable: true, currency: 'JPY', amountMinor: undefined },
    });
    expect(toProcessorEvent('evt_1', 'charge.dispute.created', { ...dispute, payment_intent: { id: 'pi_expanded' } })).toMatchObject({ paymentIntentId: 'pi_expanded' });
  });

  it('converts Stripe`s amount units to ISO minor units at the edge (ISK is two-decimal at Stripe, zero in ISO)', () => {
    expect(toProcessorEvent('evt_1', 'payment_intent.succeeded', { id: 'pi_1', amount: 50000, currency: 'isk' })).toMatchObject({
      money: { readable: true, currency: 'ISK', amountMinor: 500 },
    });
    expect(toProcessorEvent('evt_1', 'payment_intent.succeeded', { id: 'pi_1', amount: 50050, currency: 'isk' })).toMatchObject({ money: { readable: false } });
  });

  it('marks a currency the service does not take, or an amount that is no whole number, as unreadable (never a crash)', () => {
    for (const object of [
      { id: 'pi_1', amount: 100, currency: 'qqq' },
      { id: 'pi_1', amount: 100, currency: 7 },
      { id: 'pi_1', amount: 1.5, currency: 'usd' },
      { id: 'pi_1', amount: '100', currency: 'usd' },
      { id: 'pi_1', amount: 1e300, currency: 'usd' },
    ]) {
      expect(toProcessorEvent('evt_1', 'payment_intent.succeeded', object)).toMatchObject({ money: { readable: false } });
    }
  });

  it('leaves the intent id undefined when a mapped event names none', () => {
    expect(toProcessorEvent('evt_1', 'payment_intent.succeeded', { amount: 1, currency: 'usd' })).toMatchObject({ paymentIntentId: undefined });
    expect(toProcessorEvent('evt_1', 'charge.refunded', { refunded: true, payment_intent: null })).toMatchObject({ paymentIntentId: undefined });
    expect(toProcessorEvent('evt_1', 'charge.dispute.created', undefined)).toMatchObject({ paymentIntentId: undefined, money: undefined });
  });

  it('ignores every other type, Object`s own property names included', () => {
    for (const type of ['charge.succeeded', 'payment_intent.created', 'customer.created', 'constructor', '__proto__', 'toString']) {
      expect(toProcessorEvent('evt_1', type, { id: 'pi_1' })).toEqual({ kind: 'ignored', id: 'evt_1', type });
    }
  });
});
