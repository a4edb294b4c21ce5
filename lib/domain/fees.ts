/**
 * The fee split of a payment (decisions.md §6), computed when the processor reports it succeeded. Every term is
 * integer minor units, rounded half-up at the end of its own term ({@link percentOf}), never on floating point:
 *
 *   processorFee     = amount × processorFeePercent / 100
 *   partnerFeePercent = the client's fee, else the partner's service fee
 *   platformFee      = amount × partnerFeePercent / 100 (+ the client's flat USD fee on USD payments),
 *                      capped at amount − processorFee, so a tiny payment never has a negative net
 *   svcEarningAmount = amount × svcEarningPercent / 100, capped at platformFee (the service's share is cut
 *                      first; the partner's share of the platform fee is what remains)
 *   netAmount        = amount − processorFee − platformFee (what the merchant is paid)
 *
 * Invariants for every payment: processorFee + platformFee + netAmount = amount, each term ≥ 0, and
 * svcEarningAmount ≤ platformFee. Pure: no I/O.
 */
import { percentOf } from './money';
import type { Client, Partner } from './partner';
import type { FeeBreakdown } from './transaction';

/** What the split depends on, read from the configuration, the partner and the client at the time of payment. */
export interface FeeSettings {
  /** The configured `PROCESSOR_FEE_PERCENT`, recorded on the transaction. */
  processorFeePercent: number;
  /** The partner's `service_fee_percentage`: the service's own cut. */
  serviceFeePercent: number;
  /** The client's `partner_fee_percentage`; `null` uses the partner's service fee. */
  clientFeePercent: number | null;
  /** The client's `partner_fee_flat_usd` in cents, charged on USD payments only; `null` for none. */
  flatUsdCents: number | null;
}

/** The settings of a payment to `client` under `partner`, with the service's configured processor fee. */
export const feeSettingsOf = (processorFeePercent: number, partner: Pick<Partner, 'serviceFeePercentage'>, client: Pick<Client, 'partnerFeePercentage' | 'partnerFeeFlatUsdCents'>): FeeSettings => ({
  processorFeePercent,
  serviceFeePercent: partner.serviceFeePercentage,
  clientFeePercent: client.partnerFeePercentage,
  flatUsdCents: client.partnerFeeFlatUsdCents,
});

/** Percentages carry at most 4 decimals (the API refuses more), so a difference is exact in ten-thousandths. */
const subtractPercent = (a: number, b: number) => Math.round((a - b) * 10_000) / 10_000;

/** The split of `amountMinor` (a positive whole number of minor units of `currency`, upper-case ISO 4217). */
export function computeFees(amountMinor: number, currency: string, settings: FeeSettings): FeeBreakdown {
  if (!Number.isSafeInteger(amountMinor) || amountMinor <= 0) throw new RangeError(`amount must be a positive whole number of minor units, got ${amountMinor}`);
  // decisions.md §6 to the letter: the client's own fee, else the partner's. A client registered before its
  // partner's service fee was raised above its fee pays its own (lower) fee: the service's share is then cut to fit
  // the platform fee by the cap below, and the partner's share percent comes out negative (docs/checkout.md).
  const partnerFeePercent = settings.clientFeePercent ?? settings.serviceFeePercent;
  const processorFeeMinor = percentOf(amountMinor, settings.processorFeePercent);
  const flatFee = currency === 'USD' ? (settings.flatUsdCents ?? 0) : 0;
  const platformFeeMinor = Math.min(percentOf(amountMinor, partnerFeePercent) + flatFee, amountMinor - processorFeeMinor);
  const svcEarningAmountMinor = Math.min(percentOf(amountMinor, settings.serviceFeePercent), platformFeeMinor);
  return {
    processorFeePercent: settings.processorFeePercent,
    partnerFeePercent,
    partnerPayoutPercent: subtractPercent(partnerFeePercent, settings.serviceFeePercent),
    svcEarningPercent: settings.serviceFeePercent,
    processorFeeMinor,
    platformFeeMinor,
    svcEarningAmountMinor,
    netAmountMinor: amountMinor - processorFeeMinor - platformFeeMinor,
  };
}
