/**
 * The processor webhook's signature step against malformed `stripe-signature` headers (an attack run found
 * `t=1,v1=` answered INVALID_WEBHOOK_JSON: the Stripe SDK throws a plain Error, not its
 * StripeSignatureVerificationError, for an empty signature). Any failure to verify is PROCESSOR_SIGNATURE_INVALID;
 * only a body that verifies and is not a JSON event is INVALID_WEBHOOK_JSON (decisions.md §3).
 */
import { describe, expect, it } from '@jest/globals';
import { signatureHeader } from '../../../infra/local/sandbox/processor/events';
import { verifyStripeEvent } from '../../../lib/processor/events';

const SECRET = 'whsec_unit_signature_faults';
const NOW_MS = Date.parse('2026-03-01T12:00:00Z');
const nowSeconds = Math.floor(NOW_MS / 1000);

const event = JSON.stringify({ id: 'evt_1', object: 'event', type: 'payment_intent.succeeded', data: { object: { id: 'pi_1', amount: 100, currency: 'usd' } } });
const notJson = '{"id": "evt_1", "type": ';

const verify = (body: string, header: string | undefined) => () => verifyStripeEvent(body, header, SECRET, NOW_MS);
const invalidSignature = expect.objectContaining({ status: 400, code: 'PROCESSOR_SIGNATURE_INVALID' });

const MALFORMED: Array<[string, string]> = [
  ['an empty v1', 't=1,v1='],
  ['an empty v1 at the current time', `t=${nowSeconds},v1=`],
  ['an empty t', 't=,v1=abc'],
  ['no t', 'v1=abc'],
  ['no v1', 't=1'],
  ['only separators', ',,,'],
  ['a bare word', 'garbage'],
  ['a huge header (1 MB)', `t=${nowSeconds},v1=${'a'.repeat(1024 * 1024)}`],
  ['odd Unicode', `t=${nowSeconds},v1=\u00e9\u{1f600}`],
  ['a lone surrogate', `t=${nowSeconds},v1=\ud800`],
  ['Arabic-Indic digits for t', 't=\u0661\u0662,v1=abc'],
  ['a right-to-left override', `\u202et=${nowSeconds},v1=abc`],
  ['a NUL', '\u0000'],
];

describe('verifyStripeEvent with a malformed signature header', () => {
  it.each(MALFORMED)('refuses %s with PROCESSOR_SIGNATURE_INVALID, whether or not the body is JSON', (_, header) => {
    expect(verify(event, header)).toThrow(invalidSignature);
    expect(verify(notJson, header)).toThrow(invalidSignature);
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['blank', ' \t '],
  ])('refuses a %s header with PROCESSOR_SIGNATURE_MISSING', (_, header) => {
    expect(verify(event, header)).toThrow(expect.objectContaining({ status: 400, code: 'PROCESSOR_SIGNATURE_MISSING' }));
  });
});

describe('verifyStripeEvent: what is INVALID_WEBHOOK_JSON', () => {
  it('is only a body that verifies: signed garbage, and a signed thin (v2) event notification', () => {
    const thin = JSON.stringify({ id: 'evt_1', object: 'v2.core.event', type: 'payment_intent.succeeded' });

    expect(verify(notJson, signatureHeader(SECRET, notJson, nowSeconds))).toThrow(expect.objectContaining({ code: 'INVALID_WEBHOOK_JSON' }));
    expect(verify(thin, signatureHeader(SECRET, thin, nowSeconds))).toThrow(expect.objectContaining({ code: 'INVALID_WEBHOOK_JSON' }));
  });

  it('refuses garbage signed with a timestamp in the future as a bad signature, before reading the body', () => {
    expect(verify(notJson, signatureHeader(SECRET, notJson, nowSeconds + 301))).toThrow(invalidSignature);
  });

  it('refuses a future-dated signature however its timestamp is written (a second t, a sign), as the SDK reads it', () => {
    const future = signatureHeader(SECRET, event, nowSeconds + 3_600);

    expect(verify(event, future)).toThrow(invalidSignature);
    expect(verify(event, `t=0,${future}`)).toThrow(invalidSignature);
    expect(verify(event, future.replace('t=', 't=+'))).toThrow(invalidSignature);
    expect(verify(event, future.replace('t=', 't=0'))).toThrow(invalidSignature);
  });

  it('still accepts a well-signed event', () => {
    expect(verify(event, signatureHeader(SECRET, event, nowSeconds))()).toMatchObject({ kind: 'transaction', id: 'evt_1', change: { kind: 'outcome', status: 'succeeded' } });
  });
});
