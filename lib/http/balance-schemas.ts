/** Request schemas of the balances routes (decisions.md §5a, §9). */
import * as z from 'zod';
import { type CurrencyCode, normalizeCurrency } from '../domain/money';
import type { BalanceFilters } from '../use-cases/balances';
import { PageQuery } from './schemas';

const clientId = z.string().min(1).max(128);
const PARTNER_ID_EXAMPLE = 'ptr_8d0m4k7q2w9e3r5t6y1u0i8o7p';

/** An active ISO 4217 code, any case: upper-cased, as every currency the service keeps. */
const currency = z
  .string()
  .regex(/^[A-Za-z]{3}$/, { error: 'Must be an active ISO 4217 currency code' })
  .transform((code, context) => {
    const normalized = normalizeCurrency(code);
    if (normalized === undefined) {
      context.addIssue({ code: 'custom', message: 'Must be an active ISO 4217 currency code' });
      return z.NEVER;
    }
    return normalized;
  })
  .meta({ description: 'Only this currency: an active ISO 4217 code, any case', example: 'USD' });

export const BalanceListQuery = PageQuery.extend({
  client_id: clientId.optional().meta({ description: "Only this merchant: the partner's own `client_id`", example: 'merchant-001' }),
  currency: currency.optional(),
  partner_id: z.string().min(1).max(64).optional().meta({
    description: "A platform key names the partner (required). A partner key reads its own partner's; another partner's id is 403 API_KEY_SCOPE_FORBIDDEN",
    example: PARTNER_ID_EXAMPLE,
  }),
});

/** `GET /admin/partners/{partner_id}/balances`: the partner route's filters, and `owing`. */
export const AdminBalanceListQuery = PageQuery.extend({
  client_id: BalanceListQuery.shape.client_id,
  currency: currency.optional(),
  owing: z.enum(['true', 'false']).optional().meta({ description: '`true`: only the merchants that owe money (waiting reversals above their waiting sales)', example: 'true' }),
});

export const toBalanceFilters = (query: {
  client_id?: string | undefined;
  currency?: CurrencyCode | undefined;
  owing?: 'true' | 'false' | undefined;
  limit: number;
  cursor?: string | undefined;
}): BalanceFilters => ({ clientId: query.client_id, currency: query.currency, owingOnly: query.owing === 'true', limit: query.limit, cursor: query.cursor });
