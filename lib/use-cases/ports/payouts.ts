/**
 * The payout rails port (interface-spec.md POST /settlements/pay; decisions.md §7): what the settlement use case
 * needs from a rail, and nothing about how it is reached. Rail A pays GBP, EUR and USD; rail B every other
 * currency. The adapter behind it (`lib/payouts/http-rails.ts`) speaks the rail protocol of docs/rails.md
 * over HTTP: to the rails configured by environment in AWS, to the sandbox rails of `infra/local/sandbox/rails/` locally.
 *
 * Idempotency: the use case passes the batch id as `idempotencyKey`, on every attempt of that batch. A rail
 * that already paid under a key answers that same paid transfer again and pays nothing more; a failed attempt
 * does not consume the key (the next attempt under it is a new try). So a retry after a crash between "the rail
 * paid" and "the batch was recorded sent" finds the payment made instead of making a second one.
 */
import type { CurrencyCode } from '../../domain/money';
import type { RailName } from '../../domain/settlement';

export type { RailName };

export interface PayoutRequest {
  rail: RailName;
  /** The same on every attempt of one batch: its id. */
  idempotencyKey: string;
  batchId: string;
  partnerId: string;
  clientId: string;
  /** What the merchant is paid, in minor units of `currency`; > 0 (a batch with nothing to pay calls no rail). */
  amountMinor: number;
  currency: CurrencyCode;
}

/**
 * The rail's answer: `paid` (now, or earlier under the same key: the same transfer), or `failed` (a definitive
 * refusal: nothing was paid; the batch may be paid again).
 */
export type PayoutResult =
  | { outcome: 'paid'; transferId: string }
  | { outcome: 'failed'; transferId: string | null; reason: string };

/**
 * The rail could not say what happened (a timeout, a dropped connection, a 5xx): the payout may or may not have
 * been made. The batch is recorded `failed` with this reason; paying it again asks the rail under the same key,
 * which answers the payout made, if one was, instead of paying twice.
 */
export class PayoutOutcomeUnknown extends Error {
  override readonly name = 'PayoutOutcomeUnknown';
}

export interface PayoutRails {
  /** Resolves with the rail's answer; rejects with {@link PayoutOutcomeUnknown} when there is none. */
  pay(request: PayoutRequest): Promise<PayoutResult>;
  /**
   * The transfer the rail paid under `idempotencyKey`, or `null` when it paid none; rejects with
   * {@link PayoutOutcomeUnknown} when the rail cannot tell. Asked before paying again a batch an earlier attempt
   * may have paid, so no retry relies on the rail still remembering an old idempotency key.
   */
  findPaid(lookup: { rail: RailName; idempotencyKey: string }): Promise<{ transferId: string } | null>;
}
