/**
 * Money: amounts are major units (`12.34`) on the API and integer minor units (`1234`) inside, so that no sum,
 * split or comparison of money ever runs on binary floating point. Pure: no I/O.
 *
 * A JSON number reaches us as the nearest IEEE-754 double, and `String(n)` gives back the shortest decimal that
 * round-trips to it: for the up to 15 significant digits a price has, exactly the digits the partner wrote. So
 * every decision here (how many decimals an amount has, its value in minor units, a percentage of it) is made on
 * that decimal with integer arithmetic, never by multiplying doubles: `0.29 * 100` is `28.999999999999996`.
 */

/**
 * ISO 4217 List One (the maintenance agency's list of active codes, as published in 2026) with each code's
 * minor-unit exponent: a USD amount has 2 decimals, JPY none, KWD 3, CLF 4.
 *
 * Included: every code List One gives a numeric minor unit, funds codes too (BOV, CHE, CHW, CLF, COU, MXV,
 * USN, UYI, UYW): they are real settlement units with a defined exponent, and the project names CLF and UYW.
 *
 * Excluded, because List One gives them no minor unit ("N.A.") and nobody can be paid in them:
 * - precious metals, priced per troy ounce: XAU, XAG, XPT, XPD;
 * - codes that mean "no currency": XTS (reserved for testing), XXX (no currency involved);
 * - units of account of institutions, never cash or card money: XDR (IMF special drawing right), XSU (SUCRE),
 *   XUA (ADB unit of account), XAD (Arab Accounting Dinar);
 * - European bond-market units: XBA, XBB, XBC, XBD.
 *
 * Withdrawn codes (HRK and BGN, replaced by EUR; ANG by XCG; SLL by SLE; ZWL by ZWG; CUC) are absent on purpose:
 * they are no longer money anyone can pay with. Update this table with the agency's amendments.
 */
export const CURRENCY_EXPONENTS: Readonly<Record<string, number>> = Object.freeze({
  AED: 2, AFN: 2, ALL: 2, AMD: 2, AOA: 2, ARS: 2, AUD: 2, AWG: 2, AZN: 2,
  BAM: 2, BBD: 2, BDT: 2, BHD: 3, BIF: 0, BMD: 2, BND: 2, BOB: 2, BOV: 2, BRL: 2, BSD: 2, BTN: 2, BWP: 2, BYN: 2,
  BZD: 2,
  CAD: 2, CDF: 2, CHE: 2, CHF: 2, CHW: 2, CLF: 4, CLP: 0, CNY: 2, COP: 2, COU: 2, CRC: 2, CUP: 2, CVE: 2, CZK: 2,
  DJF: 0, DKK: 2, DOP: 2, DZD: 2,
  EGP: 2, ERN: 2, ETB: 2, EUR: 2,
  FJD: 2, FKP: 2,
  GBP: 2, GEL: 2, GHS: 2, GIP: 2, GMD: 2, GNF: 0, GTQ: 2, GYD: 2,
  HKD: 2, HNL: 2, HTG: 2, HUF: 2,
  IDR: 2, ILS: 2, INR: 2, IQD: 3, IRR: 2, ISK: 0,
  JMD: 2, JOD: 3, JPY: 0,
  KES: 2, KGS: 2, KHR: 2, KMF: 0, KPW: 2, KRW: 0, KWD: 3, KYD: 2, KZT: 2,
  LAK: 2, LBP: 2, LKR: 2, LRD: 2, LSL: 2, LYD: 3,
  MAD: 2, MDL: 2, MGA: 2, MKD: 2, MMK: 2, MNT: 2, MOP: 2, MRU: 2, MUR: 2, MVR: 2, MWK: 2, MXN: 2, MXV: 2, MYR: 2,
  MZN: 2,
  NAD: 2, NGN: 2, NIO: 2, NOK: 2, NPR: 2, NZD: 2,
  OMR: 3,
  PAB: 2, PEN: 2, PGK: 2, PHP: 2, PKR: 2, PLN: 2, PYG: 0,
  QAR: 2,
  RON: 2, RSD: 2, RUB: 2, RWF: 0,
  SAR: 2, SBD: 2, SCR: 2, SDG: 2, SEK: 2, SGD: 2, SHP: 2, SLE: 2, SOS: 2, SRD: 2, SSP: 2, STN: 2, SVC: 2, SYP: 2,
  SZL: 2,
  THB: 2, TJS: 2, TMT: 2, TND: 3, TOP: 2, TRY: 2, TTD: 2, TWD: 2, TZS: 2,
  UAH: 2, UGX: 0, USD: 2, USN: 2, UYI: 0, UYU: 2, UYW: 4, UZS: 2,
  VED: 2, VES: 2, VND: 0, VUV: 0,
  WST: 2,
  XAF: 0, XCD: 2, XCG: 2, XOF: 0, XPF: 0,
  YER: 2,
  ZAR: 2, ZMW: 2, ZWG: 2,
});

/**
 * The largest amount accepted, in minor units (999,999.99 USD). It bounds what one bad request can move, and
 * keeps every sum of a few amounts far inside the doubles' exact-integer range.
 */
export const MAX_MINOR_UNITS = 99_999_999;

export type ParsedAmount = { ok: true; minor: number } | { ok: false; reason: string };

/**
 * An active ISO 4217 code of the table, upper-case. Only {@link normalizeCurrency} (and {@link currencyCode},
 * through it) makes one, so a code as a partner or the processor wrote it (`usd`, `jpy`) cannot reach money
 * code without being checked and upper-cased first: for JPY, `jpy` read as an unknown two-decimal code would
 * move an amount by a factor of 100.
 */
export type CurrencyCode = string & { readonly __brand: 'CurrencyCode' };

/** A decimal number as `units × 10^-scale`, e.g. 12.34 is `{ units: 1234n, scale: 2 }`. */
interface Decimal {
  units: bigint;
  scale: number;
}

/**
 * Upper-cases a three-letter code and returns it if it is an active currency of the table, else `undefined`.
 * Any case is accepted because partners send `usd` as often as `USD`, and Stripe writes `usd`; nothing else is
 * (no trimming).
 */
export function normalizeCurrency(input: string): CurrencyCode | undefined {
  if (typeof input !== 'string' || !/^[A-Za-z]{3}$/.test(input)) return undefined;
  const code = input.toUpperCase();
  return Object.hasOwn(CURRENCY_EXPONENTS, code) ? (code as CurrencyCode) : undefined;
}

/** A code the service itself names (USD for the flat fee, a test's currency): throws where it is not in the table. */
export function currencyCode(code: string): CurrencyCode {
  const normalized = normalizeCurrency(code);
  if (normalized === undefined) throw new RangeError(`Unknown currency: ${String(code)}`);
  return normalized;
}

/**
 * The number of decimals of a currency's major unit. The code is looked up through {@link normalizeCurrency}
 * again, so one that bypassed the type (a cast, a stored item) still finds its exponent or throws, never a
 * wrong one.
 */
export function currencyExponent(currency: CurrencyCode): number {
  const code = normalizeCurrency(currency);
  const exponent = code === undefined ? undefined : CURRENCY_EXPONENTS[code];
  if (exponent === undefined) throw new RangeError(`Unknown currency: ${String(currency)}`);
  return exponent;
}

/**
 * Validates an API amount (major units) and converts it to minor units exactly. The reasons are written for
 * the partner: they end up in a validation error.
 */
export function parseAmount(amount: number, currency: CurrencyCode): ParsedAmount {
  if (!Number.isFinite(amount)) return { ok: false, reason: 'amount must be a finite number' };
  if (amount <= 0) return { ok: false, reason: 'amount must be greater than 0' };

  const exponent = currencyExponent(currency);
  const minor = exactMinorUnits(amount, exponent);
  if (minor === undefined) return { ok: false, reason: tooManyDecimals(currency, exponent) };
  if (minor > BigInt(MAX_MINOR_UNITS)) {
    return { ok: false, reason: `amount must not exceed ${toMajorUnits(MAX_MINOR_UNITS, currency)} ${currency}` };
  }
  return { ok: true, minor: Number(minor) };
}

/**
 * Major units -> minor units, exactly, for amounts that are not a payment and so take none of
 * {@link parseAmount}'s payment rules: a client's flat fee (0 allowed), an adjustment (negative). `undefined`
 * when the amount has more decimals than the currency has. Throws a RangeError for a value that is not finite
 * or whose minor units are not a safe integer.
 */
export function toMinorUnits(major: number, currency: CurrencyCode): number | undefined {
  if (!Number.isFinite(major)) throw new RangeError(`Major units must be finite, got ${major}`);
  const magnitude = exactMinorUnits(major, currencyExponent(currency));
  if (magnitude === undefined) return undefined;
  if (magnitude > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`${major} ${currency} is too large`);
  return major < 0 ? -Number(magnitude) : Number(magnitude);
}

/**
 * Converts minor units back to the API's major units: the exact inverse of {@link parseAmount}
 * (`parseAmount(toMajorUnits(m, c), c)` gives `m`). Negative amounts are allowed: adjustments are negative.
 * The major amount is the decimal string of {@link formatMinorUnits}, parsed once, so it is the double nearest
 * the true value (never a quotient of doubles), and zero of either sign gives a plain `0`.
 */
export function toMajorUnits(minor: number, currency: CurrencyCode): number {
  return Number(formatMinorUnits(minor, currency));
}

/**
 * Minor units as a major-unit decimal string with exactly the currency's number of decimals (JPY `1000`, USD
 * `12.30`, `-0.05`, KWD `1.234`), made by moving the decimal point in the integer's digits: no double ever holds
 * the major amount, so even the largest safe integer keeps every digit. Zero, `-0` included, is unsigned
 * (`0.00`). The one formatter behind {@link toMajorUnits} and the settlement report, so the API and the report
 * cannot disagree about an amount. Throws a RangeError for a value that is not a safe integer: its digits
 * (`1e+21`, `12.5`) are not an amount, and writing them would put a wrong number in front of a partner.
 */
export function formatMinorUnits(minor: number, currency: CurrencyCode): string {
  if (!Number.isSafeInteger(minor)) throw new RangeError(`Minor units must be a safe integer, got ${minor}`);
  const exponent = currencyExponent(currency);
  const digits = String(Math.abs(minor)).padStart(exponent + 1, '0');
  const whole = digits.slice(0, digits.length - exponent);
  const fraction = digits.slice(digits.length - exponent);
  const sign = minor < 0 ? '-' : '';
  return fraction === '' ? `${sign}${whole}` : `${sign}${whole}.${fraction}`;
}

/**
 * `minor × percent / 100`, rounded half-up to a whole minor unit: the fee on an amount (`percentOf(1050, 2.9)`
 * is 30.45, so 30). Computed exactly: the percent's decimal becomes an integer over a power of ten, and the
 * division and rounding run on BigInt, so no double rounding error can move a fee by a cent.
 *
 * A negative amount (a refund, an adjustment) rounds half away from zero, the mirror image of a positive one:
 * `percentOf(-m, p) === -percentOf(m, p)`, so reversing a charge reverses its fee exactly.
 *
 * Throws a RangeError if `minor` is not a safe integer, if `percent` is negative or not finite, or if the result
 * is too large to be a safe integer.
 */
export function percentOf(minor: number, percent: number): number {
  if (!Number.isSafeInteger(minor)) throw new RangeError(`Minor units must be a safe integer, got ${minor}`);
  if (!Number.isFinite(percent) || percent < 0) {
    throw new RangeError(`Percent must be a finite number >= 0, got ${percent}`);
  }

  const rate = decimalOf(percent);
  const numerator = BigInt(Math.abs(minor)) * rate.units;
  const denominator = 100n * 10n ** BigInt(rate.scale);
  const magnitude = (2n * numerator + denominator) / (2n * denominator);
  const result = Number(minor < 0 ? -magnitude : magnitude);
  if (!Number.isSafeInteger(result)) throw new RangeError(`${percent}% of ${minor} is too large`);
  return result;
}

/** How many decimal places a finite number has, exactly (`0.1 + 0.2` has 17; `1.5e-7` has 8). */
export function decimalPlaces(value: number): number {
  return decimalOf(value).scale;
}

/**
 * The exact decimal value of a finite number's shortest round-trip representation, as `units × 10^-scale`
 * with `scale >= 0`. `String(n)` switches to exponent notation below 1e-6 and from 1e21 (`1e-7`, `1.5e+21`),
 * so the exponent is folded into the scale rather than misread as digits.
 */
function decimalOf(value: number): Decimal {
  const [mantissa = '', exponentText = '0'] = String(Math.abs(value)).split('e');
  const [whole = '', fraction = ''] = mantissa.split('.');
  const scale = fraction.length - Number(exponentText);
  const units = BigInt(whole + fraction);
  return scale >= 0 ? { units, scale } : { units: units * 10n ** BigInt(-scale), scale: 0 };
}

/** `|value|` in minor units of a currency with `exponent` decimals, or `undefined` when it has more decimals. */
function exactMinorUnits(value: number, exponent: number): bigint | undefined {
  const decimal = decimalOf(value);
  if (decimal.scale > exponent) return undefined;
  return decimal.units * 10n ** BigInt(exponent - decimal.scale);
}

function tooManyDecimals(currency: CurrencyCode, exponent: number): string {
  if (exponent === 0) return `${currency} amounts must be whole numbers (no decimal places)`;
  return `${currency} amounts allow at most ${exponent} decimal place${exponent === 1 ? '' : 's'}`;
}
