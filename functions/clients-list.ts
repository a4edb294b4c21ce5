/** GET /api/v1/clients: the partner's merchants, newest first, paged, optional `status` filter. */
import * as z from 'zod';
import { CLIENT_STATUSES } from '../lib/domain/partner';
import { httpRoute } from '../lib/http/chain';
import { presentClient, presentPage } from '../lib/http/presenters';
import { PageQuery } from '../lib/http/schemas';
import { listClients } from '../lib/use-cases/clients';

const Query = PageQuery.extend({
  status: z.enum(CLIENT_STATUSES).optional(),
  partner_id: z.string().optional(),
});

export const handler = httpRoute({ access: 'partner-read', partnerOnly: true, query: Query }, async ({ caller, query }) => {
  const page = await listClients(caller, { ...query, partnerId: query.partner_id });
  return { status: 200, body: presentPage(page, presentClient) };
});
