/** POST /api/v1/clients: register a merchant under the API key's partner. */
import { z } from 'zod';
import { CLIENT_STATUSES } from '../lib/domain/partner';
import { httpRoute } from '../lib/http/chain';
import { presentClient } from '../lib/http/presenters';
import { identifier, maxDecimals, percentage } from '../lib/http/schemas';
import { registerClient } from '../lib/use-cases/clients';

const Body = z.strictObject({
  /** Not sent by partners (the key decides); tolerated only when it names the key's own partner. */
  partner_id: z.string().optional(),
  client_id: identifier(3, 128),
  legal_name: z.string().trim().min(2).max(200),
  status: z.enum(CLIENT_STATUSES).default('active'),
  partner_fee_percentage: percentage.nullable().default(null),
  partner_fee_flat_usd: z.number().min(0).max(10).refine(maxDecimals(2), 'At most 2 decimal places').nullable().default(null),
});

export const handler = httpRoute(
  { access: 'partner-mutation', partnerOnly: true, body: Body },
  async ({ caller, body }) => {
    const client = await registerClient(caller, body.partner_id, {
      clientId: body.client_id,
      legalName: body.legal_name,
      status: body.status,
      partnerFeePercentage: body.partner_fee_percentage,
      partnerFeeFlatUsd: body.partner_fee_flat_usd,
    });
    return { status: 201, body: presentClient(client) };
  },
);
