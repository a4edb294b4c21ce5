/**
 * Balances (decisions.md §5a, `GET /balances`): what waits for settlement per merchant and currency, and what the
 * next run will pay or what the merchant owes. Read from the same waiting entries a settlement run sums.
 */
import type { Caller } from '../domain/caller';
import { fieldValidationError } from '../domain/errors';
import type { CurrencyCode } from '../domain/money';
import type { Page } from '../domain/page';
import { partnerActedFor } from './partner-scope';
import type { PartnerReader } from './ports/partner-readers';

/** One merchant's waiting money in one currency (minor units), as the store sums it. */
export interface WaitingBalance {
  clientId: string;
  currency: CurrencyCode;
  /** Net of the waiting entries that pay the merchant: sales and dispute reinstatements. */
  creditsMinor: number;
  /** Net of the waiting refunds, disputes and dispute fees, as a positive amount. */
  debitsMinor: number;
  /** When the oldest waiting debit was written (`null` without one): how long the merchant may have owed. */
  owingSince: string | null;
}

export interface BalanceFilters {
  clientId?: string | undefined;
  currency?: CurrencyCode | undefined;
  /** Only the merchants that owe money. */
  owingOnly?: boolean;
  limit: number;
  cursor?: string | undefined;
}

export interface BalanceDeps {
  balances: { listBalances(partnerId: string, query: BalanceFilters): Promise<Page<WaitingBalance>> };
  partners: PartnerReader;
}

/** decisions.md §5a's balance, minor units. */
export interface Balance {
  clientId: string;
  currency: CurrencyCode;
  unsettledNetMinor: number;
  waitingReversalsMinor: number;
  owedMinor: number;
  nextPayoutEstimateMinor: number;
  /** While the merchant owes: since its oldest waiting reversal was written; else `null`. */
  owingSince: string | null;
}

export const balanceOf = (waiting: WaitingBalance): Balance => ({
  clientId: waiting.clientId,
  currency: waiting.currency,
  unsettledNetMinor: waiting.creditsMinor,
  waitingReversalsMinor: waiting.debitsMinor,
  owedMinor: Math.max(0, waiting.debitsMinor - waiting.creditsMinor),
  nextPayoutEstimateMinor: Math.max(0, waiting.creditsMinor - waiting.debitsMinor),
  owingSince: waiting.debitsMinor > waiting.creditsMinor ? waiting.owingSince : null,
});

/**
 * `GET /balances`: a partner key reads its own partner's (another's `partner_id` is 403); a platform key names the
 * partner (`partner_id` is required: balances are kept per partner); an admin reads any existing partner's (404).
 */
export async function listBalancesFor(deps: BalanceDeps, caller: Caller, partnerId: string | undefined, filters: BalanceFilters): Promise<Page<Balance>> {
  const owner = await partnerActedFor(deps.partners, caller, partnerId);
  if (owner === undefined) throw fieldValidationError('partner_id', 'A platform key names the partner whose balances it reads', 'partner_id is required');
  const page = await deps.balances.listBalances(owner, filters);
  return { items: page.items.map(balanceOf), nextCursor: page.nextCursor };
}
