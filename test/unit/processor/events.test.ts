/**
 * Inbound processor events at the Stripe adapter: the signature verified Stripe's way (signed here exactly as the
 * sandbox processor signs), then the event mapped to the service's terms (decisions.md §5, §5a): an outcome, the
 * charge's refunds, or a dispute, every amount in the currency's ISO minor units.
 */
import { describe, expect, it } from '@jest/globals';
import { signatureHeader } from '../../../infra/local/sandbox/processor/events';
import { intentOutcomeEvent } from '../../../lib/processor/event-objects';
import { verifyStripeEvent, toProcessorEvent } from '../../../lib/processor/events';

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
      change: { kind: 'outcome', status: 'succeeded' },
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

describe('toProcessorEvent (decisions.md §5, §5a)', () => {
  const charge = { id: 'ch_1', object: 'charge', payment_intent: 'pi_9', amount: 1000, amount_refunded: 1000, currency: 'usd', refunded: true };
  const dispute = { id: 'dp_1', object: 'dispute', payment_intent: 'pi_9', charge: 'ch_1', amount: 400, currency: 'jpy', status: 'needs_response' };

  it.each([
    ['payment_intent.succeeded', 'succeeded'],
    ['payment_intent.payment_failed', 'failed'],
    ['payment_intent.canceled', 'abandoned'],
  ])('maps %s to the outcome %s, with the intent itself as the payment intent', (type, status) => {
    expect(toProcessorEvent('evt_1', type, { id: 'pi_9', amount: 1000, currency: 'usd' })).toEqual({
      kind: 'transaction',
      id: 'evt_1',
      type,
      change: { kind: 'outcome', status },
      paymentIntentId: 'pi_9',
      money: { readable: true, currency: 'USD', amountMinor: 1000 },
    });
  });

  it('maps a full refund and a partial one alike, to the charge`s cumulative refunded amount, by the charge`s payment_intent', () => {
    // A partial refund no longer asks for nothing: it moves money (decisions.md §5a); only the ledger decides the status.
    expect(toProcessorEvent('evt_1', 'charge.refunded', charge)).toEqual({
      kind: 'transaction',
      id: 'evt_1',
      type: 'charge.refunded',
      change: { kind: 'refunds', chargeId: 'ch_1', refundedMinor: 1000, refunds: undefined },
      paymentIntentId: 'pi_9',
      money: { readable: true, currency: 'USD', amountMinor: 1000 },
    });
    expect(toProcessorEvent('evt_1', 'charge.refunded', { ...charge, amount_refunded: 400, refunded: false })).toMatchObject({
      change: { kind: 'refunds', chargeId: 'ch_1', refundedMinor: 400, refunds: undefined },
      paymentIntentId: 'pi_9',
    });
  });

  it('reads a charge without amount_refunded but marked refunded as refunded in full', () => {
    const { amount_refunded: _, ...older } = charge;

    expect(toProcessorEvent('evt_1', 'charge.refunded', older)).toMatchObject({ change: { kind: 'refunds', refundedMinor: 1000 } });
  });

  it('lists the charge`s refunds oldest first (Stripe lists them newest first), leaving out failed and canceled ones', () => {
    const refunds = {
      object: 'list',
      has_more: false,
      data: [
        { id: 're_4', amount: 50, status: 'failed' },
        { id: 're_3', amount: 300, status: 'succeeded' },
        { id: 're_c', amount: 70, status: 'canceled' },
        { id: 're_2', amount: 200, status: 'pending' },
        { id: 're_1', amount: 100, status: 'succeeded' },
      ],
    };

    const mapped = toProcessorEvent('evt_1', 'charge.refunded', { ...charge, amount_refunded: 600, refunded: false, refunds });

    expect(mapped).toMatchObject({
      change: {
        kind: 'refunds',
        refundedMinor: 600,
        refunds: [
          { id: 're_1', amountMinor: 100 },
          { id: 're_2', amountMinor: 200 },
          { id: 're_3', amountMinor: 300 },
        ],
      },
    });
  });

  it('gives no list of refunds when the charge lists only some of them (has_more) or one it cannot read, but still the refunded amount', () => {
    const data = [
      { id: 're_2', amount: 200 },
      { id: 're_1', amount: 100 },
    ];
    const partial = { ...charge, amount_refunded: 300, refunded: false };

    expect(toProcessorEvent('evt_1', 'charge.refunded', { ...partial, refunds: { has_more: true, data } })).toMatchObject({ change: { refundedMinor: 300, refunds: undefined } });
    for (const unreadable of [{ amount: 100 }, { id: 're_1', amount: '100' }, { id: 're_1', amount: 1.5 }, 'refund']) {
      const refunds = { has_more: false, data: [data[0], unreadable] };
      expect(toProcessorEvent('evt_1', 'charge.refunded', { ...partial, refunds })).toMatchObject({
        money: { readable: true },
        change: { kind: 'refunds', refundedMinor: 300, refunds: undefined },
      });
    }
  });

  it('converts refund amounts from Stripe`s units (ISK: two decimals at Stripe, none in ISO)', () => {
    const isk = { ...charge, currency: 'isk', amount: 50000, amount_refunded: 20000, refunded: false, refunds: { has_more: false, data: [{ id: 're_1', amount: 20000 }] } };

    expect(toProcessorEvent('evt_1', 'charge.refunded', isk)).toMatchObject({
      money: { readable: true, currency: 'ISK', amountMinor: 500 },
      change: { kind: 'refunds', refundedMinor: 200, refunds: [{ id: 're_1', amountMinor: 200 }] },
    });
  });

  it('marks a refund whose amount cannot be read, or exceeds the charge, as unreadable, with no change (never a crash)', () => {
    for (const refunded of [{ amount_refunded: 1.5 }, { amount_refunded: '400' }, { amount_refunded: -1 }, { amount_refunded: 1001 }, { amount_refunded: undefined, refunded: false }]) {
      const mapped = toProcessorEvent('evt_1', 'charge.refunded', { ...charge, ...refunded });
      expect(mapped).toMatchObject({ kind: 'transaction', paymentIntentId: 'pi_9', change: null, money: { readable: false } });
      expect(mapped.kind === 'transaction' && mapped.money?.readable === false && mapped.money.reason).toEqual(expect.any(String));
    }
    // A fraction of the ISO unit: 500.50 ISK is no amount.
    expect(toProcessorEvent('evt_1', 'charge.refunded', { ...charge, currency: 'isk', amount: 50000, amount_refunded: 50050 })).toMatchObject({ change: null, money: { readable: false } });
  });

  it('maps a dispute by its payment_intent, checking its currency but not its (possibly partial) amount against the payment', () => {
    expect(toProcessorEvent('evt_1', 'charge.dispute.created', dispute)).toEqual({
      kind: 'transaction',
      id: 'evt_1',
      type: 'charge.dispute.created',
      change: { kind: 'dispute', dispute: { id: 'dp_1', amountMinor: 400, feeMinor: null, status: 'needs_response' } },
      paymentIntentId: 'pi_9',
      money: { readable: true, currency: 'JPY', amountMinor: undefined },
    });
    expect(toProcessorEvent('evt_1', 'charge.dispute.created', { ...dispute, payment_intent: { id: 'pi_expanded' } })).toMatchObject({ paymentIntentId: 'pi_expanded' });
  });

  it('maps a closed dispute (no longer ignored) to its outcome: won, lost, or still needing a response for any other status', () => {
    const closed = (status: unknown) => toProcessorEvent('evt_2', 'charge.dispute.closed', { ...dispute, status });

    expect(closed('won')).toMatchObject({ kind: 'transaction', type: 'charge.dispute.closed', paymentIntentId: 'pi_9', change: { kind: 'dispute', dispute: { id: 'dp_1', amountMinor: 400, status: 'won' } } });
    expect(closed('lost')).toMatchObject({ change: { kind: 'dispute', dispute: { id: 'dp_1', status: 'lost' } } });
    for (const other of ['under_review', 'needs_response', undefined]) expect(closed(other)).toMatchObject({ change: { dispute: { status: 'needs_response' } } });
  });

  it('ignores an inquiry (a dispute whose status is warning_*): the card network asks, no money leaves', () => {
    for (const type of ['charge.dispute.created', 'charge.dispute.closed']) {
      for (const status of ['warning_needs_response', 'warning_under_review', 'warning_closed']) {
        expect(toProcessorEvent('evt_3', type, { ...dispute, status })).toEqual({ kind: 'ignored', id: 'evt_3', type });
      }
    }
  });

  it('reads a dispute whose fee is in another currency than the dispute`s, without the fee (no conversion on a guess)', () => {
    const event = toProcessorEvent('evt_4', 'charge.dispute.created', { ...dispute, balance_transactions: [{ amount: -400, currency: 'eur', fee: 1500 }] });
    expect(event).toMatchObject({ kind: 'transaction', change: { kind: 'dispute', dispute: { id: 'dp_1', amountMinor: 400, feeMinor: null }, feeInOtherCurrency: true } });
    expect(toProcessorEvent('evt_6', 'charge.dispute.created', { ...dispute, amount: 0 })).toMatchObject({ kind: 'transaction', change: null, money: { readable: false } });
    const same = toProcessorEvent('evt_5', 'charge.dispute.created', { ...dispute, balance_transactions: [{ amount: -400, currency: dispute.currency.toUpperCase(), fee: 1500 }] });
    expect(same).toMatchObject({ change: { kind: 'dispute', dispute: { feeMinor: 1500 } } });
  });

  it('reads the dispute fee as the sum of the fees of the balance transactions that withdrew money, in ISO minor units', () => {
    const withFees = (currency: string, balanceTransactions: unknown) => toProcessorEvent('evt_1', 'charge.dispute.created', { ...dispute, currency, balance_transactions: balanceTransactions });
    const feeOf = (event: ReturnType<typeof toProcessorEvent>) => (event.kind === 'transaction' && event.change?.kind === 'dispute' ? event.change.dispute.feeMinor : 'no dispute');

    // Withdrawals (negative amounts) count; a reinstatement (positive) and entries without a fee do not.
    const balance = [
      { amount: -40000, fee: 1500 },
      { amount: 40000, fee: 300 },
      { amount: -100, fee: 500 },
      { amount: -200 },
      'not a balance transaction',
    ];
    expect(feeOf(withFees('usd', balance))).toBe(2000);
    expect(feeOf(withFees('jpy', [{ amount: -400, fee: 15 }]))).toBe(15);
    expect(feeOf(withFees('isk', [{ amount: -40000, fee: 150000 }]))).toBe(1500);
    expect(feeOf(withFees('usd', [{ amount: -400, fee: 0 }]))).toBe(0);
    // No withdrawal stated yet: the fee is not known (null), which is not a fee of 0.
    expect(feeOf(withFees('usd', undefined))).toBeNull();
    expect(feeOf(withFees('usd', []))).toBeNull();
    expect(feeOf(withFees('usd', [{ amount: 40000, fee: 300 }]))).toBeNull();
  });

  it('marks a dispute whose id, amount or fee cannot be read as unreadable, with no change', () => {
    for (const unreadable of [
      { id: undefined },
      { id: '' },
      { amount: 1.5 },
      { amount: '400' },
      { amount: -400 },
      { balance_transactions: [{ amount: -400, fee: 1.5 }] },
      { currency: 'usd', balance_transactions: [{ amount: -400, fee: '15.00' }] },
      { currency: 'qqq' },
    ]) {
      expect(toProcessorEvent('evt_1', 'charge.dispute.created', { ...dispute, ...unreadable })).toMatchObject({ kind: 'transaction', paymentIntentId: 'pi_9', change: null, money: { readable: false } });
    }
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

  it('leaves the intent id undefined when a mapped event names none, and reads no change from an event that states no money', () => {
    expect(toProcessorEvent('evt_1', 'payment_intent.succeeded', { amount: 1, currency: 'usd' })).toMatchObject({ paymentIntentId: undefined });
    expect(toProcessorEvent('evt_1', 'charge.refunded', { refunded: true, payment_intent: null })).toMatchObject({ paymentIntentId: undefined, money: undefined, change: null });
    expect(toProcessorEvent('evt_1', 'charge.dispute.created', undefined)).toMatchObject({ paymentIntentId: undefined, money: undefined, change: null });
    expect(toProcessorEvent('evt_1', 'charge.dispute.closed', undefined)).toMatchObject({ kind: 'transaction', paymentIntentId: undefined, money: undefined, change: null });
  });

  it('ignores every other type, Object`s own property names included', () => {
    for (const type of ['charge.succeeded', 'charge.dispute.updated', 'charge.refund.updated', 'payment_intent.created', 'customer.created', 'constructor', '__proto__', 'toString']) {
      expect(toProcessorEvent('evt_1', type, { id: 'pi_1' })).toEqual({ kind: 'ignored', id: 'evt_1', type });
    }
  });
});

describe('intentOutcomeEvent (decisions.md §12)', () => {
  const intent = (fields: Record<string, unknown>) => ({ id: 'pi_42', object: 'payment_intent', amount: 4999, currency: 'eur', ...fields });

  it.each([
    [{ status: 'succeeded' }, 'payment_intent.succeeded', 'succeeded'],
    [{ status: 'canceled' }, 'payment_intent.canceled', 'abandoned'],
    [{ status: 'requires_payment_method', last_payment_error: { code: 'card_declined' } }, 'payment_intent.payment_failed', 'failed'],
  ])('reads %j as the event that reports it, through the same mapping, with an id per intent and outcome', (state, type, status) => {
    expect(intentOutcomeEvent(intent(state))).toEqual({
      ...toProcessorEvent(`intent_state_pi_42_${status}`, type, intent(state)),
      id: `intent_state_pi_42_${status}`,
    });
    expect(intentOutcomeEvent(intent(state))?.change).toEqual({ kind: 'outcome', status });
  });

  it.each([
    { status: 'requires_payment_method', last_payment_error: null },
    { status: 'requires_confirmation' },
    { status: 'requires_action' },
    { status: 'processing' },
    { status: 'requires_capture' },
    {},
  ])('has no outcome while the payment is open: %j', (state) => {
    expect(intentOutcomeEvent(intent(state))).toBeUndefined();
  });
});
