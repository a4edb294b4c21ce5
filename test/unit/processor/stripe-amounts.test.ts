import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { CURRENCY_EXPONENTS, type CurrencyCode, currencyCode, MAX_MINOR_UNITS } from '../../../lib/domain/money';
import { fromStripeAmount, stripeExponent, toStripeAmount } from '../../../lib/processor/stripe-amounts';
import { fixPropertySeed } from '../../support/seeds';

fixPropertySeed();

/** Stripe's documented lists (docs.stripe.com/currencies), kept here apart from the code under test. */
const ZERO_DECIMAL_AT_STRIPE = ['BIF', 'CLP', 'DJF', 'GNF', 'JPY', 'KMF', 'KRW', 'MGA', 'PYG', 'RWF', 'UGX', 'VND', 'VUV', 'XAF', 'XOF', 'XPF'];
const THREE_DECIMAL_AT_STRIPE = ['BHD', 'JOD', 'KWD', 'OMR', 'TND'];
const decimalsAtStripe = (code: string) => (ZERO_DECIMAL_AT_STRIPE.includes(code) ? 0 : THREE_DECIMAL_AT_STRIPE.includes(code) ? 3 : 2);
const isoDecimals = (code: string) => CURRENCY_EXPONENTS[code] ?? Number.NaN;

/**
 * The oracle, on BigInt: the Stripe amount with the same value as `minor` ISO minor units, or undefined when
 * there is none (a fraction of Stripe's unit, or a three-decimal amount not in steps of 10).
 */
function expectedStripeAmount(minor: number, code: string): number | undefined {
  const scaled = BigInt(minor) * 10n ** BigInt(decimalsAtStripe(code));
  const divisor = 10n ** BigInt(isoDecimals(code));
  if (scaled % divisor !== 0n) return undefined;
  const amount = scaled / divisor;
  if (decimalsAtStripe(code) === 3 && amount % 10n !== 0n) return undefined;
  return Number(amount);
}

/** The oracle the other way: the ISO minor units with the same value as a Stripe amount, or undefined. */
function expectedMinor(amount: number, code: string): number | undefined {
  const scaled = BigInt(amount) * 10n ** BigInt(isoDecimals(code));
  const divisor = 10n ** BigInt(decimalsAtStripe(code));
  return scaled % divisor === 0n ? Number(scaled / divisor) : undefined;
}

const CODES = Object.keys(CURRENCY_EXPONENTS);
const anyCode = fc.constantFrom(...CODES);
/** Minor amounts, with multiples of 10 and 100 as often as others, so both answers of every currency come up. */
const anyMinor = fc.oneof(
  fc.integer({ min: 1, max: MAX_MINOR_UNITS }),
  fc.integer({ min: 1, max: Math.floor(MAX_MINOR_UNITS / 10) }).map((n) => n * 10),
  fc.integer({ min: 1, max: Math.floor(MAX_MINOR_UNITS / 100) }).map((n) => n * 100),
);
/** The code in another case, as Stripe writes it (`jpy`) or as a partner might (`Jpy`). */
const recased = (code: string, lower: boolean[]) =>
  [...code].map((letter, i) => (lower[i] ? letter.toLowerCase() : letter)).join('') as CurrencyCode;
const anyCasing = fc.array(fc.boolean(), { minLength: 3, maxLength: 3 });

describe("Stripe's amount units", () => {
  it.each([
    ['USD', 1999, 1999],
    ['EUR', 4999, 4999],
    ['JPY', 500, 500],
    ['ISK', 5, 500],
    ['KWD', 1250, 1250],
    ['MGA', 1000, 10],
    ['IQD', 1230, 123],
    ['CLF', 12300, 123],
  ])('%s: %i ISO minor units are %i at Stripe, and back', (currency, minor, stripe) => {
    expect(toStripeAmount(minor, currencyCode(currency))).toEqual({ ok: true, amount: stripe });
    expect(fromStripeAmount(stripe, currencyCode(currency))).toEqual({ ok: true, minor });
  });

  it('converts a lower-case code as its upper-case one: 500 jpy is 500 at Stripe, not 50000', () => {
    expect(toStripeAmount(500, 'jpy' as CurrencyCode)).toEqual({ ok: true, amount: 500 });
    expect(fromStripeAmount(500, 'jpy' as CurrencyCode)).toEqual({ ok: true, minor: 500 });
  });

  it('refuses amounts Stripe cannot express instead of rounding them', () => {
    expect(toStripeAmount(1050, currencyCode('MGA'))).toEqual({ ok: false, reason: expect.stringContaining('MGA') });
    expect(toStripeAmount(1005, currencyCode('KWD'))).toEqual({ ok: false, reason: expect.stringContaining('0.010') });
    expect(toStripeAmount(1231, currencyCode('IQD'))).toEqual({ ok: false, reason: expect.stringContaining('IQD') });
  });

  it('refuses a Stripe amount that is not a whole number of ISO minor units: 12345 ISK at Stripe is 123.45 ISK', () => {
    expect(fromStripeAmount(12345, currencyCode('ISK'))).toEqual({ ok: false, reason: expect.stringContaining('ISK') });
  });

  it('throws for amounts that are not whole numbers, and for codes the service does not take', () => {
    expect(() => toStripeAmount(12.5, currencyCode('USD'))).toThrow(RangeError);
    expect(() => toStripeAmount(Number.NaN, currencyCode('USD'))).toThrow(RangeError);
    expect(() => fromStripeAmount(12.5, currencyCode('USD'))).toThrow(RangeError);
    expect(() => toStripeAmount(100, 'QQQ' as CurrencyCode)).toThrow(RangeError);
  });

  it("gives every currency Stripe's exponent: its zero-decimal and three-decimal lists, two decimals otherwise", () => {
    for (const code of CODES) expect([code, stripeExponent(currencyCode(code))]).toEqual([code, decimalsAtStripe(code)]);
  });

  it('sends Stripe exactly the same value, as a whole number, and refuses exactly what Stripe cannot express (property)', () => {
    fc.assert(
      fc.property(anyCode, anyMinor, (code, minor) => {
        const expected = expectedStripeAmount(minor, code);

        const converted = toStripeAmount(minor, currencyCode(code));

        expect(converted).toEqual(expected === undefined ? { ok: false, reason: expect.any(String) } : { ok: true, amount: expected });
        if (converted.ok) expect(Number.isSafeInteger(converted.amount)).toBe(true);
      }),
      { numRuns: 5_000 },
    );
  });

  it('round-trips every amount it sends, in every currency, to the same minor units (property)', () => {
    fc.assert(
      fc.property(anyCode, anyMinor, (code, minor) => {
        const converted = toStripeAmount(minor, currencyCode(code));
        if (converted.ok) expect(fromStripeAmount(converted.amount, currencyCode(code))).toEqual({ ok: true, minor });
      }),
      { numRuns: 5_000 },
    );
  });

  it('reads every Stripe amount as the same value in whole ISO minor units, or refuses it (property)', () => {
    fc.assert(
      fc.property(anyCode, fc.integer({ min: 0, max: MAX_MINOR_UNITS * 100 }), (code, amount) => {
        const expected = expectedMinor(amount, code);

        const minor = fromStripeAmount(amount, currencyCode(code));

        expect(minor).toEqual(expected === undefined ? { ok: false, reason: expect.any(String) } : { ok: true, minor: expected });
      }),
      { numRuns: 5_000 },
    );
  });

  it('gives the same answer whatever the case of the code (property)', () => {
    fc.assert(
      fc.property(anyCode, anyCasing, anyMinor, (code, casing, minor) => {
        expect(toStripeAmount(minor, recased(code, casing))).toEqual(toStripeAmount(minor, currencyCode(code)));
        expect(fromStripeAmount(minor, recased(code, casing))).toEqual(fromStripeAmount(minor, currencyCode(code)));
      }),
      { numRuns: 2_000 },
    );
  });
});
