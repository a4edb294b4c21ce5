/**
 * Stripe's units for amounts differ from ISO 4217 for some currencies (docs.stripe.com/currencies): its
 * zero-decimal list (which adds MGA and keeps ISK two-decimal for backwards compatibility), and its
 * three-decimal currencies, whose amounts must end in 0. Every other currency is two-decimal at Stripe.
 * The service keeps ISO minor units everywhere; only the Stripe adapter converts, both ways. Pure.
 */
import { currencyExponent } from '../domain/money';

const STRIPE_ZERO_DECIMAL = new Set(['BIF', 'CLP', 'DJF', 'GNF', 'JPY', 'KMF', 'KRW', 'MGA', 'PYG', 'RWF', 'UGX', 'VND', 'VUV', 'XAF', 'XOF', 'XPF']);
const STRIPE_THREE_DECIMAL = new Set(['BHD', 'JOD', 'KWD', 'OMR', 'TND']);

export function stripeExponent(currency: string): number {
  if (STRIPE_ZERO_DECIMAL.has(currency)) return 0;
  if (STRIPE_THREE_DECIMAL.has(currency)) return 3;
  return 2;
}

/**
 * ISO minor units -> Stripe's amount, or the reason Stripe cannot express it (a fraction Stripe does not
 * take, e.g. MGA 10.50, or a three-decimal amount not ending in 0).
 */
export function toStripeAmount(minor: number, currency: string): { ok: true; amount: number } | { ok: false; reason: string } {
  const shift = stripeExponent(currency) - currencyExponent(currency);
  const scale = 10 ** Math.abs(shift);
  if (shift < 0 && minor % scale !== 0) {
    return { ok: false, reason: `The card processor takes ${currency} amounts with at most ${stripeExponent(currency)} decimal places` };
  }
  const amount = shift >= 0 ? minor * scale : minor / scale;
  if (STRIPE_THREE_DECIMAL.has(currency) && amount % 10 !== 0) {
    return { ok: false, reason: `The card processor takes ${currency} amounts in multiples of 0.010` };
  }
  return { ok: true, amount };
}

/** Stripe's amount -> ISO minor units (exact for every amount `toStripeAmount` produced). */
export function fromStripeAmount(amount: number, currency: string): number {
  const shift = stripeExponent(currency) - currencyExponent(currency);
  return shift >= 0 ? amount / 10 ** shift : amount * 10 ** -shift;
}
