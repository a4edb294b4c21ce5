import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  CURRENCY_EXPONENTS,
  type CurrencyCode,
  MAX_MINOR_UNITS,
  currencyCode,
  currencyExponent,
  formatMinorUnits,
  normalizeCurrency,
  parseAmount,
  percentOf,
  toMajorUnits,
  toMinorUnits,
} from '../../../lib/domain/money';
import { fixPropertySeed } from '../../support/seeds';

fixPropertySeed();

const CURRENCIES = Object.keys(CURRENCY_EXPONENTS);

const anyCurrency = fc.constantFrom(...CURRENCIES).map(currencyCode);
const anyMinor = fc.integer({ min: 1, max: MAX_MINOR_UNITS });
const anySignedMinor = fc.integer({ min: -MAX_MINOR_UNITS, max: MAX_MINOR_UNITS });

/**
 * A percent as an integer numerator over 10^scale, plus the JavaScript number a partner would send for it.
 * With at most 10 digits, `numerator / 10 ** scale` is the double whose shortest decimal is exactly
 * numerator × 10^-scale, so the reference below can use the integers and never look at the double.
 */
const percentParts = (maxPercent: number) =>
  fc.integer({ min: 0, max: 6 }).chain((scale) =>
    fc.integer({ min: 0, max: maxPercent * 10 ** scale }).map((numerator) => ({
      numerator,
      scale,
      percent: numerator / 10 ** scale,
    })),
  );

const USD = currencyCode('USD');

function greatestCommonDivisor(a: number, b: number): number {
  return b === 0 ? a : greatestCommonDivisor(b, a % b);
}

/**
 * An amount and a percent whose exact product is an odd number of half minor units: a rounding tie, where a
 * floating error of one ulp decides the cent. With half = 50 × 10^scale, minor × numerator / (2 × half) is
 * odd × rest / 2 when minor = odd × half / gcd(numerator, half) and rest = numerator / gcd(...) is odd.
 */
const roundingTies = fc
  .record({
    scale: fc.integer({ min: 0, max: 3 }),
    numerator: fc.integer({ min: 1, max: 100_000 }),
    odd: fc.integer({ min: 0, max: 499 }).map((i) => 2 * i + 1),
    negative: fc.boolean(),
  })
  .map(({ scale, numerator, odd, negative }) => {
    const half = 50 * 10 ** scale;
    const common = greatestCommonDivisor(numerator, half);
    const rest = numerator / common;
    const minor = ((odd * half) / common) * (negative ? -1 : 1);
    const awayFromZero = (odd * rest + 1) / 2;
    return { minor, percent: numerator / 10 ** scale, rest, expected: negative ? -awayFromZero : awayFromZero };
  })
  .filter(({ rest }) => rest % 2 === 1);

/** minor × numerator / (100 × 10^scale), rounded half away from zero: quotient and remainder, no doubles. */
function referencePercentOf(minor: number, numerator: number, scale: number): number {
  const product = BigInt(Math.abs(minor)) * BigInt(numerator);
  const denominator = 100n * 10n ** BigInt(scale);
  const quotient = product / denominator;
  const remainder = product % denominator;
  const rounded = 2n * remainder >= denominator ? quotient + 1n : quotient;
  return Number(minor < 0 ? -rounded : rounded);
}

describe('CURRENCY_EXPONENTS', () => {
  it.each([
    ['JPY', 0],
    ['KRW', 0],
    ['CLP', 0],
    ['ISK', 0],
    ['XOF', 0],
    ['UYI', 0],
    ['USD', 2],
    ['EUR', 2],
    ['GBP', 2],
    ['XCG', 2],
    ['ZWG', 2],
    ['SLE', 2],
    ['VED', 2],
    ['KWD', 3],
    ['BHD', 3],
    ['JOD', 3],
    ['OMR', 3],
    ['TND', 3],
    ['IQD', 3],
    ['LYD', 3],
    ['CLF', 4],
    ['UYW', 4],
  ])('give %s the ISO 4217 exponent %i', (code, exponent) => {
    expect(CURRENCY_EXPONENTS[code]).toBe(exponent);
  });

  it('hold the 164 payable codes of ISO 4217 List One, each three upper-case letters with exponent 0, 2, 3 or 4', () => {
    expect(CURRENCIES).toHaveLength(164);
    for (const code of CURRENCIES) {
      expect(code).toMatch(/^[A-Z]{3}$/);
      expect([0, 2, 3, 4]).toContain(CURRENCY_EXPONENTS[code]);
    }
  });

  it('include the funds codes, which have a defined exponent', () => {
    for (const code of ['BOV', 'CHE', 'CHW', 'CLF', 'COU', 'MXV', 'USN', 'UYI', 'UYW']) {
      expect(Object.hasOwn(CURRENCY_EXPONENTS, code)).toBe(true);
    }
  });

  it.each([
    ['precious metals', ['XAU', 'XAG', 'XPT', 'XPD']],
    ['no-currency codes', ['XTS', 'XXX']],
    ['units of account', ['XDR', 'XSU', 'XUA', 'XAD']],
    ['bond-market units', ['XBA', 'XBB', 'XBC', 'XBD']],
    ['withdrawn currencies', ['HRK', 'BGN', 'ANG', 'SLL', 'ZWL', 'CUC']],
  ])('leave out %s', (_kind, codes) => {
    for (const code of codes) expect(Object.hasOwn(CURRENCY_EXPONENTS, code)).toBe(false);
  });

  it('cannot be changed at run time', () => {
    expect(Object.isFrozen(CURRENCY_EXPONENTS)).toBe(true);
  });
});

describe('normalizeCurrency', () => {
  it.each([
    ['usd', 'USD'],
    ['Usd', 'USD'],
    ['USD', 'USD'],
    ['jpy', 'JPY'],
    ['kwd', 'KWD'],
  ])('accept %s as %s', (input, expected) => {
    expect(normalizeCurrency(input)).toBe(expected);
  });

  it.each(['QQQ', 'US', 'USDD', '', ' usd', 'usd ', 'U$D', '840', 'xau', 'XTS', 'hrk'])(
    'reject %j',
    (input) => {
      expect(normalizeCurrency(input)).toBeUndefined();
    },
  );
});

describe('currencyCode', () => {
  it('give the normalised code of a currency the table holds, and throw for any other', () => {
    expect(currencyCode('usd')).toBe('USD');
    expect(() => currencyCode('QQQ')).toThrow(/Unknown currency/);
  });

  it('is the only way to a CurrencyCode: a plain string does not type-check where money code wants one', () => {
    // @ts-expect-error an unnormalised code cannot reach money code
    expect(() => toMajorUnits(100, 'XAU')).toThrow(/Unknown currency/);
  });
});

describe('currencyExponent', () => {
  it('return the number of decimals of the major unit, whatever the case of the code', () => {
    expect(currencyExponent(currencyCode('JPY'))).toBe(0);
    expect(currencyExponent('usd' as CurrencyCode)).toBe(2);
    expect(currencyExponent(currencyCode('KWD'))).toBe(3);
    expect(currencyExponent(currencyCode('CLF'))).toBe(4);
  });

  it.each(['QQQ', 'XAU', 'US', ''])('throw for the unknown code %j', (code) => {
    expect(() => currencyExponent(code as CurrencyCode)).toThrow(RangeError);
    expect(() => currencyExponent(code as CurrencyCode)).toThrow(/Unknown currency/);
  });
});

describe('parseAmount', () => {
  it.each([
    [12.34, 'USD', 1234],
    [0.29, 'USD', 29],
    [19.99, 'USD', 1999],
    [4.35, 'USD', 435],
    [1.15, 'USD', 115],
    [0.01, 'USD', 1],
    [12.3, 'EUR', 1230],
    [5, 'usd', 500],
    [100, 'JPY', 100],
    [500, 'JPY', 500],
    [1.234, 'KWD', 1234],
    [1.005, 'KWD', 1005],
    [0.001, 'BHD', 1],
    [1.2345, 'CLF', 12345],
  ])('convert %p %s to %i minor units exactly', (amount, currency, minor) => {
    expect(parseAmount(amount, currencyCode(currency))).toEqual({ ok: true, minor });
  });

  it.each([0, -0, -1, -0.01])('reject the non-positive amount %p', (amount) => {
    expect(parseAmount(amount, USD)).toEqual({ ok: false, reason: 'amount must be greater than 0' });
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])('reject %p', (amount) => {
    expect(parseAmount(amount, USD)).toEqual({ ok: false, reason: 'amount must be a finite number' });
  });

  it.each([
    [12.345, 'USD', 'USD amounts allow at most 2 decimal places'],
    [1.005, 'USD', 'USD amounts allow at most 2 decimal places'],
    [0.1 + 0.2, 'USD', 'USD amounts allow at most 2 decimal places'],
    [1e-7, 'USD', 'USD amounts allow at most 2 decimal places'],
    [100.5, 'JPY', 'JPY amounts must be whole numbers (no decimal places)'],
    [1.0001, 'KWD', 'KWD amounts allow at most 3 decimal places'],
    [1.5e-7, 'CLF', 'CLF amounts allow at most 4 decimal places'],
  ])('reject %p %s for its decimal places', (amount, currency, reason) => {
    expect(parseAmount(amount, currencyCode(currency))).toEqual({ ok: false, reason });
  });

  it('accept the maximum of every exponent and reject one minor unit more', () => {
    expect(parseAmount(999_999.99, USD)).toEqual({ ok: true, minor: MAX_MINOR_UNITS });
    expect(parseAmount(99_999_999, currencyCode('JPY'))).toEqual({ ok: true, minor: MAX_MINOR_UNITS });
    expect(parseAmount(99_999.999, currencyCode('KWD'))).toEqual({ ok: true, minor: MAX_MINOR_UNITS });
    expect(parseAmount(9_999.9999, currencyCode('CLF'))).toEqual({ ok: true, minor: MAX_MINOR_UNITS });

    expect(parseAmount(1_000_000, USD)).toEqual({ ok: false, reason: 'amount must not exceed 999999.99 USD' });
    expect(parseAmount(100_000_000, currencyCode('JPY'))).toEqual({ ok: false, reason: 'amount must not exceed 99999999 JPY' });
    expect(parseAmount(100_000, currencyCode('KWD'))).toEqual({ ok: false, reason: 'amount must not exceed 99999.999 KWD' });
    expect(parseAmount(10_000, currencyCode('CLF'))).toEqual({ ok: false, reason: 'amount must not exceed 9999.9999 CLF' });
  });

  it('read amounts written in exponent notation by their value, not their digits', () => {
    // String(1.5e21) is '1.5e+21': a whole number of yen, too large, not one with a decimal place.
    expect(parseAmount(1.5e21, currencyCode('JPY'))).toEqual({ ok: false, reason: 'amount must not exceed 99999999 JPY' });
    expect(parseAmount(1e21, USD)).toEqual({ ok: false, reason: 'amount must not exceed 999999.99 USD' });
    // 1e-7 is valid for no currency: 7 decimal places.
    expect(parseAmount(1e-7, currencyCode('CLF'))).toEqual({ ok: false, reason: 'CLF amounts allow at most 4 decimal places' });
  });

  it('give back every valid minor amount of every currency (property)', () => {
    fc.assert(
      fc.property(anyCurrency, anyMinor, (currency, minor) => {
        expect(parseAmount(toMajorUnits(minor, currency), currency)).toEqual({ ok: true, minor });
      }),
      { numRuns: 5_000 },
    );
  });

  it('give back the edge amounts of each currency in the table', () => {
    const edges = [1, 5, 9, 10, 29, 99, 100, 101, 435, 1005, 1999, 123_456, 99_999_998, MAX_MINOR_UNITS];
    for (const currency of CURRENCIES.map(currencyCode)) {
      for (const minor of edges) {
        expect(parseAmount(toMajorUnits(minor, currency), currency)).toEqual({ ok: true, minor });
      }
    }
  });

  it('reject every amount with one decimal place more than the currency has (property)', () => {
    const notMultipleOfTen = anyMinor.filter((minor) => minor % 10 !== 0);
    fc.assert(
      fc.property(anyCurrency, notMultipleOfTen, (currency, digits) => {
        // Arrange: the digits with one decimal place too many, e.g. 12345 -> 1234.5 JPY, 12.345 USD, 1.2345 KWD
        const exponent = currencyExponent(currency);
        const amount = digits / 10 ** (exponent + 1);

        // Act
        const parsed = parseAmount(amount, currency);

        // Assert
        expect(parsed.ok).toBe(false);
        expect(parsed.ok ? '' : parsed.reason).toMatch(/decimal place/);
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('toMajorUnits', () => {
  it.each([
    [1999, 'USD', 19.99],
    [1, 'USD', 0.01],
    [MAX_MINOR_UNITS, 'USD', 999_999.99],
    [500, 'JPY', 500],
    [1005, 'KWD', 1.005],
    [5, 'KWD', 0.005],
    [1, 'CLF', 0.0001],
    [1999, 'usd', 19.99],
  ])('turn %i %s into %p', (minor, currency, major) => {
    expect(toMajorUnits(minor, currency as CurrencyCode)).toBe(major);
  });

  it('keep the sign of negative amounts (adjustments)', () => {
    expect(toMajorUnits(-1999, USD)).toBe(-19.99);
    expect(toMajorUnits(-1, currencyCode('KWD'))).toBe(-0.001);
    expect(toMajorUnits(-500, currencyCode('JPY'))).toBe(-500);
  });

  it('turn zero into a plain 0, not -0', () => {
    expect(toMajorUnits(0, USD)).toBe(0);
    expect(toMajorUnits(-0, USD)).toBe(0);
  });

  it('throw for an unknown currency or minor units that are not an integer', () => {
    expect(() => toMajorUnits(100, 'QQQ' as CurrencyCode)).toThrow(/Unknown currency/);
    expect(() => toMajorUnits(12.5, USD)).toThrow(RangeError);
    expect(() => toMajorUnits(Number.NaN, USD)).toThrow(RangeError);
  });

  it('be the exact negation for negative amounts (property)', () => {
    fc.assert(
      fc.property(anyCurrency, anyMinor, (currency, minor) => {
        expect(toMajorUnits(-minor, currency)).toBe(-toMajorUnits(minor, currency));
      }),
    );
  });
});

describe('formatMinorUnits', () => {
  it.each([
    [1000, 'JPY', '1000'],
    [-500, 'JPY', '-500'],
    [0, 'JPY', '0'],
    [1230, 'USD', '12.30'],
    [100, 'USD', '1.00'],
    [5, 'USD', '0.05'],
    [-5, 'USD', '-0.05'],
    [-1999, 'USD', '-19.99'],
    [0, 'USD', '0.00'],
    [1999, 'usd', '19.99'],
    [1234, 'KWD', '1.234'],
    [1, 'KWD', '0.001'],
    [-1, 'KWD', '-0.001'],
    [0, 'KWD', '0.000'],
    [1, 'CLF', '0.0001'],
  ])('write %i %s as %p, with exactly the currency’s decimals', (minor, currency, text) => {
    expect(formatMinorUnits(minor, currency as CurrencyCode)).toBe(text);
  });

  it('write -0 as an unsigned zero', () => {
    expect(formatMinorUnits(-0, USD)).toBe('0.00');
    expect(formatMinorUnits(-0, currencyCode('JPY'))).toBe('0');
  });

  it('write the largest safe integers digit for digit, where dividing a double would not', () => {
    // (2^53 - 1) / 100 as a double is 90071992547409.9 and / 1000 is 9007199254740.99: digits lost.
    expect(formatMinorUnits(Number.MAX_SAFE_INTEGER, USD)).toBe('90071992547409.91');
    expect(formatMinorUnits(-Number.MAX_SAFE_INTEGER, USD)).toBe('-90071992547409.91');
    expect(formatMinorUnits(Number.MAX_SAFE_INTEGER, currencyCode('KWD'))).toBe('9007199254740.991');
    expect(formatMinorUnits(Number.MAX_SAFE_INTEGER, currencyCode('JPY'))).toBe('9007199254740991');
  });

  it.each([12.5, -0.5, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 2 ** 53, -(2 ** 53), 1e21])(
    'refuse %p, which is not a safe integer of minor units',
    (minor) => {
      expect(() => formatMinorUnits(minor, USD)).toThrow(RangeError);
    },
  );

  it('throw for an unknown currency', () => {
    expect(() => formatMinorUnits(100, 'QQQ' as CurrencyCode)).toThrow(/Unknown currency/);
  });

  it('read back to the same minor units, with exactly the currency’s decimals, for every currency and sign (property)', () => {
    fc.assert(
      fc.property(anyCurrency, fc.maxSafeInteger(), (currency, minor) => {
        // Act
        const text = formatMinorUnits(minor, currency);

        // Assert: canonical form (no leading zeros, no "-0"), `exponent` decimals, the same integer
        const exponent = currencyExponent(currency);
        const match = /^(-?)(0|[1-9][0-9]*)(?:\.([0-9]+))?$/.exec(text);
        expect(match).not.toBeNull();
        const [, sign = '', whole = '', fraction = ''] = match as RegExpExecArray;
        expect(fraction.length).toBe(exponent);
        const magnitude = BigInt(whole + fraction);
        expect(sign === '-' && magnitude === 0n).toBe(false);
        expect(sign === '-' ? -magnitude : magnitude).toBe(BigInt(minor));
      }),
    );
  });
});

describe('toMinorUnits', () => {
  it.each([
    [0.29, 'USD', 29],
    [0, 'USD', 0],
    [10, 'USD', 1000],
    [-0.29, 'USD', -29],
    [1.005, 'KWD', 1005],
    [500, 'JPY', 500],
  ])('turn %p %s into %i minor units exactly, zero and negative amounts too', (major, currency, minor) => {
    expect(toMinorUnits(major, currencyCode(currency))).toBe(minor);
  });

  it.each([
    [1.234, 'USD'],
    [0.5, 'JPY'],
    [0.1 + 0.2, 'USD'],
  ])('give undefined for %p %s: more decimals than the currency has', (major, currency) => {
    expect(toMinorUnits(major, currencyCode(currency))).toBeUndefined();
  });

  it('throw for a value that is not finite, or whose minor units are not a safe integer', () => {
    expect(() => toMinorUnits(Number.NaN, USD)).toThrow(RangeError);
    expect(() => toMinorUnits(1e20, USD)).toThrow(RangeError);
  });

  it('be the exact inverse of toMajorUnits, for every currency and sign (property)', () => {
    fc.assert(
      fc.property(anyCurrency, anySignedMinor, (currency, minor) => {
        expect(toMinorUnits(toMajorUnits(minor, currency), currency)).toBe(minor);
      }),
      { numRuns: 5_000 },
    );
  });
});

describe('percentOf', () => {
  it.each([
    [1000, 2.9, 29],
    [1050, 2.9, 30],
    [1052, 2.9, 31],
    [50, 1, 1],
    [49, 1, 0],
    [0, 5, 0],
    [1000, 0, 0],
    [1000, 100, 1000],
    [1999, 3.5, 70],
  ])('take of %i at %p%% the amount %i', (minor, percent, expected) => {
    expect(percentOf(minor, percent)).toBe(expected);
  });

  it('round exact halves up where floating multiplication falls just below them', () => {
    // 625 × 4.56 / 100 is 28.5 exactly, but 28.499999999999996 in doubles; 750 × 8.2 / 100 is 61.5.
    expect(percentOf(625, 4.56)).toBe(29);
    expect(percentOf(750, 8.2)).toBe(62);
  });

  it('read percents written in exponent notation by their value', () => {
    // String(1e-6) is '0.000001' but String(1e-7) is '1e-7': 50,000,000 × 1e-6 / 100 = 0.5, rounds to 1.
    expect(percentOf(50_000_000, 1e-6)).toBe(1);
    expect(percentOf(49_999_999, 1e-6)).toBe(0);
    expect(percentOf(99_999_999, 2e-7)).toBe(0);
    expect(percentOf(5_000_000_000, 1e-7)).toBe(5);
  });

  it('round negative amounts half away from zero, mirroring positive ones', () => {
    expect(percentOf(-1050, 2.9)).toBe(-30);
    expect(percentOf(-1052, 2.9)).toBe(-31);
    expect(percentOf(-50, 1)).toBe(-1);
    expect(percentOf(-49, 1)).toBe(0);
  });

  it.each([-1, -0.01, Number.NaN, Number.POSITIVE_INFINITY])('throw for the percent %p', (percent) => {
    expect(() => percentOf(1000, percent)).toThrow(RangeError);
  });

  it('throw for minor units that are not a safe integer, or a result that would not be one', () => {
    expect(() => percentOf(10.5, 2)).toThrow(RangeError);
    expect(() => percentOf(Number.MAX_SAFE_INTEGER + 1, 2)).toThrow(RangeError);
    expect(() => percentOf(Number.MAX_SAFE_INTEGER, 200)).toThrow(/too large/);
  });

  it('equal the exact rational result rounded half away from zero (property)', () => {
    fc.assert(
      fc.property(anySignedMinor, percentParts(1_000), (minor, { numerator, scale, percent }) => {
        expect(percentOf(minor, percent)).toBe(referencePercentOf(minor, numerator, scale));
      }),
      { numRuns: 5_000 },
    );
  });

  it('round every exact tie half away from zero (property)', () => {
    fc.assert(
      fc.property(roundingTies, ({ minor, percent, expected }) => {
        expect(percentOf(minor, percent)).toBe(expected);
      }),
      { numRuns: 2_000 },
    );
  });

  it('never decrease when the amount grows (property)', () => {
    fc.assert(
      fc.property(anySignedMinor, anySignedMinor, percentParts(1_000), (a, b, { percent }) => {
        const [smaller, larger] = a <= b ? [a, b] : [b, a];
        expect(percentOf(smaller, percent)).toBeLessThanOrEqual(percentOf(larger, percent));
      }),
      { numRuns: 2_000 },
    );
  });

  it('never exceed the amount, nor change its sign, for percents up to 100 (property)', () => {
    fc.assert(
      fc.property(anySignedMinor, percentParts(100), (minor, { percent }) => {
        const share = percentOf(minor, percent);
        expect(Math.abs(share)).toBeLessThanOrEqual(Math.abs(minor));
        expect(share * minor).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: 2_000 },
    );
  });
});
