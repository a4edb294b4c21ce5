/**
 * Stripe's units for amounts differ from ISO 4217 for some currencies (docs.stripe.com/currencies): its
 * zero-decimal list (which adds MGA and keeps ISK two-decimal for backwards compatibility), and its
 * three-decimal currencies, whose amounts must end in 0. Every other currency is two-decimal at Stripe.
 * The service keeps ISO minor units everywhere; only the Stripe adapter converts, both ways. Pure.
 */
import { type CurrencyCode, currencyCode, currencyExponent, type ParsedAmount } from '../domain/money';

const STRIPE_ZERO_DECIMAL = new Set(['BIF', 'CLP', 'DJF', 'GNF', 'JPY', 'KMF', 'KRW', 'MGA', 'PYG', 'RWF', 'UGX', 'VND', 'VUV', 'XAF', 'XOF', 'XPF']);
const STRIPE_THREE_DECIMAL = new Set(['BHD', 'JOD', 'KWD', 'OMR', 'TND']);

export type StripeAmount = { ok: true; amount: number } | { ok: false; reason: string };

/**
 * How many decimals Stripe's amounts of a currency have. The code is normalised again here, whatever the type
 * promised: Stripe writes `jpy`, and a lower-case code looked up in the upper-case lists above would be taken
 * for a two-decimal currency (500 JPY sent as 50000).
 */
export function stripeExponent(currency: CurrencyCode): number {
  const code = currencyCode(currency);
  if (STRIPE_ZERO_DECIMAL.has(code)) return 0;
  if (STRIPE_THREE_DECIMAL.has(code)) return 3;
  return 2;
}

/** Stripe's exponent minus ISO's: how many places an amount moves on its way to Stripe (negative: fewer there). */
const shiftOf = (currency: CurrencyCode) => stripeExponent(currency) - currencyExponent(currency);

function assertWholeNumber(amount: number, what: string): void {
  if (!Number.isSafeInteger(amount)) throw new RangeError(`${what} must be a safe integer, got ${amount}`);
}

/**
 * ISO minor units -> Stripe's amount, or the reason Stripe cannot express it (a fraction of Stripe's unit,
 * e.g. MGA 10.50, or a three-decimal amount not ending in 0): the caller refuses the payment rather than send
 * Stripe a rounded amount. Minor units that are not a whole number are a bug upstream: a RangeError.
 */
export function toStripeAmount(minor: number, currency: CurrencyCode): StripeAmount {
  assertWholeNumber(minor, 'Minor units');
  const code = currencyCode(currency);
  const shift = shiftOf(code);
  const scale = 10 ** Math.abs(shift);
  if (shift < 0 && minor % scale !== 0) {
    return { ok: false, reason: `The card processor takes ${code} amounts with at most ${stripeExponent(code)} decimal places` };
  }
  const amount = shift >= 0 ? minor * scale : minor / scale;
  if (STRIPE_THREE_DECIMAL.has(code) && amount % 10 !== 0) {
    return { ok: false, reason: `The card processor takes ${code} amounts in multiples of 0.010` };
  }
  assertWholeNumber(amount, `${minor} ${code} at the card processor`);
  return { ok: true, amount };
}

/**
 * Stripe's amount -> ISO minor units (exact for every amount {@link toStripeAmount} produced), or the reason
 * there is no such whole number: an intent made elsewhere for 123.45 ISK (12345 at Stripe, where ISK has two
 * decimals) has no amount in ISK's whole krónur. A Stripe amount that is not a whole number is a RangeError.
 */
export function fromStripeAmount(amount: number, currency: CurrencyCode): ParsedAmount {
  assertWholeNumber(amount, 'Stripe amounts');
  const code = currencyCode(currency);
  const shift = shiftOf(code);
  const scale = 10 ** Math.abs(shift);
  if (shift > 0 && amount % scale !== 0) {
    return { ok: false, reason: `The card processor's amount ${amount} is not a whole number of ${code} minor units` };
  }
  const minor = shift > 0 ? amount / scale : amount * scale;
  assertWholeNumber(minor, `${amount} ${code} from the card processor`);
  return { ok: true, minor };
}
