/** POST /api/v1/clients: register a merchant under the API key's partner. */
import * as z from 'zod';
import { toMinorUnits } from '../lib/domain/money';
import { CLIENT_STATUSES, FLAT_FEE_CURRENCY } from '../lib/domain/partner';
import { httpRoute } from '../lib/http/chain';
import { presentClient } from '../lib/http/presenters';
import { clientIdentifier, percentage, text } from '../lib/http/schemas';
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
  partner_id: z.string().optional(),
  client_id: clientIdentifier,
  legal_name: text(2, 200),
  status: z.enum(CLIENT_STATUSES).default('active'),
  partner_fee_percentage: percentage.nullable().default(null),
  partner_fee_flat_usd: flatFeeCents.nullable().default(null),
});

export const handler = httpRoute(
  { access: 'partner-mutation', partnerOnly: true, body: Body },
  async ({ caller, body }) => {
    const client = await registerClient(caller, body.partner_id, {
      clientId: body.client_id,
      legalName: body.legal_name,
      status: body.status,
      partnerFeePercentage: body.partner_fee_percentage,
      partnerFeeFlatUsdCents: body.partner_fee_flat_usd,
    });
    return { status: 201, body: presentClient(client) };
  },
);
