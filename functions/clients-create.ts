/** POST /api/v1/clients: register a merchant under the API key's partner. */
import * as z from 'zod';
import { toMinorUnits } from '../lib/domain/money';
import { CLIENT_STATUSES, FLAT_FEE_CURRENCY } from '../lib/domain/partner';
import { httpRoute } from '../lib/adapters/http-route';
import { presentClient } from '../lib/http/presenters';
import { CreatedClient } from '../lib/http/response-schemas';
import type { RouteDoc } from '../lib/http/route-doc';
import { clientIdentifier, percentage, text } from '../lib/http/schemas';
import { clientStore } from '../lib/adapters/clients';
import { registerClient } from '../lib/use-cases/clients';

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

const Body = z.strictObject({
  /** Not sent by partners (the key decides); tolerated only when it names the key's own partner. */
  partner_id: z
    .string()
    .optional()
    .meta({ description: "Not needed: the API key decides the partner. If sent, it must be the key's own partner (else 403 API_KEY_SCOPE_FORBIDDEN)" }),
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

const doc: RouteDoc = {
  summary: 'Register a merchant (client)',
  description:
    "Registers a merchant under the partner of the API key. Needs a partner-scoped key (a platform-wide key is 403 API_KEY_SCOPE_FORBIDDEN); `partner_id` is not sent. " +
    'A suspended partner cannot manage its merchants (403 PARTNER_SUSPENDED). `partner_fee_percentage` may not be below the partner\'s service fee ' +
    'percentage (400 CLIENT_FEE_BELOW_SVC_FEE). A `client_id` the partner already has is 409 CLIENT_EXISTS. The `client_id` can then be used in the ' +
    'payment routes while the client is `active`. Idempotency key: one per merchant, e.g. `client-<client_id>`.',
  tag: 'Clients',
  responses: {
    201: { description: 'The registered client', schema: CreatedClient },
  },
  errors: ['PARTNER_NOT_FOUND', 'PARTNER_SUSPENDED', 'CLIENT_FEE_BELOW_SVC_FEE', 'CLIENT_EXISTS'],
  example: { client_id: 'merchant-001', legal_name: 'Merchant One Ltd', partner_fee_percentage: 3.5, partner_fee_flat_usd: 0.3 },
};

export const handler = httpRoute(
  { access: 'partner-mutation', partnerOnly: true, body: Body, doc },
  async ({ caller, body }) => {
    const client = await registerClient(clientStore, caller, body.partner_id, {
      clientId: body.client_id,
      legalName: body.legal_name,
      status: body.status,
      partnerFeePercentage: body.partner_fee_percentage,
      partnerFeeFlatUsdCents: body.partner_fee_flat_usd,
    });
    return { status: 201, body: presentClient(client) };
  },
);
