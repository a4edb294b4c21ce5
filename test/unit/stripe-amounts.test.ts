import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { CURRENCY_EXPONENTS, MAX_MINOR_UNITS } from '../../lib/domain/money';
import { fromStripeAmount, stripeExponent, toStripeAmount } from '../../lib/processor/stripe-amounts';

describe("Stripe's amount units", () => {
  it.each([
    ['USD', 1999, 1999],
    ['EUR', 4999, 4999],
    ['JPY', 500, 500],
    ['ISK', 5, 500],
    ['KWD', 1250, 1250],
    ['MGA', 1000, 10],
    ['IQD', 1230, 123],
  ])('%s: %i ISO minor units are %i at Stripe, and back', (currency, minor, stripe) => {
    expect(toStripeAmount(minor, currency)).toEqual({ ok: true, amount: stripe });
    expect(fromStripeAmount(stripe, currency)).toBe(minor);
  });

  it('refuses amounts Stripe cannot express instead of rounding them', () => {
    expect(toStripeAmount(1050, 'MGA')).toMatchObject({ ok: false, reason: expect.stringContaining('MGA') });
    expect(toStripeAmount(1005, 'KWD')).toMatchObject({ ok: false, reason: expect.stringContaining('0.010') });
    expect(toStripeAmount(1231, 'IQD')).toMatchObject({ ok: false });
  });

  it('follows the zero-decimal and three-decimal lists of Stripe', () => {
    expect(['JPY', 'KRW', 'MGA', 'UGX', 'XOF'].map(stripeExponent)).toEqual([0, 0, 0, 0, 0]);
    expect(['BHD', 'JOD', 'KWD', 'OMR', 'TND'].map(stripeExponent)).toEqual([3, 3, 3, 3, 3]);
    expect(['USD', 'ISK', 'HUF', 'TWD', 'IQD'].map(stripeExponent)).toEqual([2, 2, 2, 2, 2]);
  });

  it('round-trips every amount it accepts, in every currency, to the same major value', () => {
    fc.assert(
      fc.property(fc.constantFrom(...Object.keys(CURRENCY_EXPONENTS)), fc.integer({ min: 1, max: MAX_MINOR_UNITS }), (currency, minor) => {
        const converted = toStripeAmount(minor, currency);
        if (!converted.ok) return;
        expect(Number.isInteger(converted.amount)).toBe(true);
        expect(fromStripeAmount(converted.amount, currency)).toBe(minor);
        expect(converted.amount / 10 ** stripeExponent(currency)).toBeCloseTo(minor / 10 ** (CURRENCY_EXPONENTS[currency] ?? 2), 10);
      }),
    );
  });
});
