/** The fee split of decisions.md §6: exact in minor units, for every currency exponent, amount and fee setting. */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { computeFees, type FeeSettings } from '../../../lib/domain/fees';
import { CURRENCY_EXPONENTS, MAX_MINOR_UNITS } from '../../../lib/domain/money';
import { fixPropertySeed } from '../../support/seeds';

fixPropertySeed();

/** A percentage 0-100 with at most 4 decimals, as the API takes it, and its value in ten-thousandths. */
const percent = fc.integer({ min: 0, max: 1_000_000 }).map((tenThousandths) => ({ tenThousandths, value: tenThousandths / 10_000 }));

/** The oracle: amount × k / 1,000,000 rounded half-up, on BigInt, independent of the code under test. */
const halfUp = (amount: number, tenThousandths: number) =>
  Number((2n * BigInt(amount) * BigInt(tenThousandths) + 1_000_000n) / 2_000_000n);

const currencies = Object.keys(CURRENCY_EXPONENTS);

const cases = fc.record({
  amount: fc.oneof(fc.integer({ min: 1, max: MAX_MINOR_UNITS }), fc.integer({ min: 1, max: 100 }), fc.constant(MAX_MINOR_UNITS)),
  currency: fc.oneof(fc.constantFrom(...currencies), fc.constant('USD')),
  processor: percent,
  service: percent,
  client: fc.option(percent, { nil: null }),
  flatUsdCents: fc.option(fc.integer({ min: 0, max: 1000 }), { nil: null }),
});

type Case = typeof cases extends fc.Arbitrary<infer T> ? T : never;

const settingsOf = (c: Case): FeeSettings => ({
  processorFeePercent: c.processor.value,
  serviceFeePercent: c.service.value,
  clientFeePercent: c.client?.value ?? null,
  flatUsdCents: c.flatUsdCents,
});

describe('computeFees', () => {
  it('always splits the amount exactly: processor fee + platform fee + net = amount, none negative', () => {
    fc.assert(
      fc.property(cases, (c) => {
        const fees = computeFees(c.amount, c.currency, settingsOf(c));
        expect(fees.processorFeeMinor + fees.platformFeeMinor + fees.netAmountMinor).toBe(c.amount);
        for (const term of [fees.processorFeeMinor, fees.platformFeeMinor, fees.netAmountMinor, fees.svcEarningAmountMinor]) {
          expect(Number.isSafeInteger(term)).toBe(true);
          expect(term).toBeGreaterThanOrEqual(0);
        }
        expect(fees.svcEarningAmountMinor).toBeLessThanOrEqual(fees.platformFeeMinor);
      }),
      { numRuns: 3000 },
    );
  });

  it('rounds each term half-up exactly and caps the platform fee, then the service share, as specified', () => {
    fc.assert(
      fc.property(cases, (c) => {
        const fees = computeFees(c.amount, c.currency, settingsOf(c));
        const partnerPercent = c.client ?? c.service;
        const processorFee = halfUp(c.amount, c.processor.tenThousandths);
        const uncappedPlatform = halfUp(c.amount, partnerPercent.tenThousandths) + (c.currency === 'USD' ? (c.flatUsdCents ?? 0) : 0);
        const platformFee = Math.min(uncappedPlatform, c.amount - processorFee);
        expect(fees.processorFeeMinor).toBe(processorFee);
        expect(fees.platformFeeMinor).toBe(platformFee);
        expect(fees.svcEarningAmountMinor).toBe(Math.min(halfUp(c.amount, c.service.tenThousandths), platformFee));
        expect(fees.netAmountMinor).toBe(c.amount - processorFee - platformFee);
      }),
      { numRuns: 3000 },
    );
  });

  it('records the percentages, and the partner keeps exactly what the service does not take', () => {
    fc.assert(
      fc.property(cases, (c) => {
        const fees = computeFees(c.amount, c.currency, settingsOf(c));
        const partnerPercent = c.client ?? c.service;
        expect(fees.processorFeePercent).toBe(c.processor.value);
        expect(fees.svcEarningPercent).toBe(c.service.value);
        expect(fees.partnerFeePercent).toBe(partnerPercent.value);
        expect(Math.round(fees.partnerPayoutPercent * 10_000)).toBe(partnerPercent.tenThousandths - c.service.tenThousandths);
      }),
    );
  });

  it('charges a client whose fee is below a since-raised service fee its own fee, cutting the service share to fit', () => {
    const fees = computeFees(10_000, 'EUR', { processorFeePercent: 2.9, serviceFeePercent: 5, clientFeePercent: 2, flatUsdCents: null });

    expect(fees).toMatchObject({ partnerFeePercent: 2, svcEarningPercent: 5, partnerPayoutPercent: -3, platformFeeMinor: 200, svcEarningAmountMinor: 200 });
  });

  it('charges the flat USD fee on USD payments only', () => {
    const settings: FeeSettings = { processorFeePercent: 2.9, serviceFeePercent: 1, clientFeePercent: 2, flatUsdCents: 30 };

    expect(computeFees(10_000, 'USD', settings)).toMatchObject({ processorFeeMinor: 290, platformFeeMinor: 230, svcEarningAmountMinor: 100, netAmountMinor: 9480 });
    expect(computeFees(10_000, 'EUR', settings)).toMatchObject({ processorFeeMinor: 290, platformFeeMinor: 200, svcEarningAmountMinor: 100, netAmountMinor: 9510 });
  });

  it('on a tiny payment caps the platform fee at what the processor leaves, cutting the service share first', () => {
    // 0.01 USD: processor fee 2.9 % of 1 cent rounds to 0; 10 % + 30 cents flat is capped at 1 cent.
    const fees = computeFees(1, 'USD', { processorFeePercent: 2.9, serviceFeePercent: 5, clientFeePercent: 10, flatUsdCents: 30 });

    expect(fees).toEqual({
      processorFeePercent: 2.9,
      partnerFeePercent: 10,
      partnerPayoutPercent: 5,
      svcEarningPercent: 5,
      processorFeeMinor: 0,
      platformFeeMinor: 1,
      svcEarningAmountMinor: 0,
      netAmountMinor: 0,
    });
  });

  it('rounds half-up at the end of each term (1050 × 2.9 % = 30.45 → 30; 50 × 1 % = 0.5 → 1)', () => {
    expect(computeFees(1050, 'EUR', { processorFeePercent: 2.9, serviceFeePercent: 0, clientFeePercent: null, flatUsdCents: null }).processorFeeMinor).toBe(30);
    expect(computeFees(50, 'JPY', { processorFeePercent: 1, serviceFeePercent: 1, clientFeePercent: null, flatUsdCents: null })).toMatchObject({ processorFeeMinor: 1, platformFeeMinor: 1, svcEarningAmountMinor: 1, netAmountMinor: 48 });
  });

  it('refuses an amount that is not a positive whole number of minor units', () => {
    const settings: FeeSettings = { processorFeePercent: 2.9, serviceFeePercent: 1, clientFeePercent: null, flatUsdCents: null };
    for (const amount of [0, -1, 1.5, Number.NaN]) expect(() => computeFees(amount, 'USD', settings)).toThrow(RangeError);
  });
});
