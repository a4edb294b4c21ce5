/** Request schemas of the partner's client (merchant) routes. */
import * as z from 'zod';
import { toMinorUnits } from '../domain/money';
import { CLIENT_STATUSES, FLAT_FEE_CURRENCY } from '../domain/partner';
import { clientIdentifier, PageQuery, percentage, text } from './schemas';

/** Dollars on the API (0-10, whole cents), cents inside: converted exactly, never as `dollars * 100` on a double. */
const flatFeeCents = z
  .number()
  .min(0)
  .max(10)
  .transform((dollars, ctx) => {
    const cents = toMinorUnits(dollars, FLAT_FEE_CURRENCY);
    if (cents === undefined) ctx.addIssue({ code: 'custom', message: 'At most 2 decimal places' });
    return cents ?? z.NEVER;
  });

/** Not sent by partners (the key decides); tolerated only when it names the key's own partner. */
const keyPartnerId = z
  .string()
  .optional()
  .meta({ description: "Not needed: the API key decides the partner. If sent, it must be the key's own partner (else 403 API_KEY_SCOPE_FORBIDDEN)" });

export const CreateClientBody = z.strictObject({
  partner_id: keyPartnerId,
  client_id: clientIdentifier.meta({
    description:
      "The partner's own stable merchant identifier, used as `client_id` in payments and filters: 3-128 characters, no `#`, control, invisible (zero-width, bidi) or line-separator characters, no whitespace at either end",
    example: 'merchant-001',
  }),
  legal_name: text(2, 200).meta({
    description: "The merchant's legal name: 2-200 characters, any script, no control characters or bidi controls, no whitespace at either end (refused, not trimmed)",
    example: 'Merchant One Ltd',
  }),
  status: z
    .enum(CLIENT_STATUSES)
    .default('active')
    .meta({ description: 'Default `active`. Only an `active` client takes payments (else 403 CLIENT_NOT_ACTIVE)', example: 'active' }),
  partner_fee_percentage: percentage
    .nullable()
    .default(null)
    .meta({
      description:
        "The platform fee taken from each of this merchant's payments, in percent (0-100, at most 4 decimals); the service's share comes out of it, so it may not be below the partner's service fee percentage (else 400 CLIENT_FEE_BELOW_SVC_FEE). Default null: the partner's service fee percentage",
      example: 3.5,
    }),
  partner_fee_flat_usd: flatFeeCents
    .nullable()
    .default(null)
    .meta({
      description: 'A flat fee added to the platform fee of each USD payment, in US dollars: 0-10, at most 2 decimals. Default null: none',
      example: 0.3,
    }),
});

export const ClientListQuery = PageQuery.extend({
  status: z.enum(CLIENT_STATUSES).optional().meta({ description: 'Only clients in this status', example: 'active' }),
  partner_id: keyPartnerId,
});
