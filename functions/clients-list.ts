/** GET /api/v1/clients: the partner's merchants, newest first, paged, optional `status` filter. */
import * as z from 'zod';
import { CLIENT_STATUSES } from '../lib/domain/partner';
import { httpRoute } from '../lib/http/chain';
import { presentClient, presentPage } from '../lib/http/presenters';
import { PageQuery } from '../lib/http/schemas';
import { clientStore } from '../lib/adapters/clients';
import { listClients } from '../lib/use-cases/clients';
import { listClientsDoc } from '../lib/http/route-docs/clients';

const Query = PageQuery.extend({
  status: z.enum(CLIENT_STATUSES).optional().meta({ description: 'Only clients in this status', example: 'active' }),
  partner_id: z
    .string()
    .optional()
    .meta({ description: "Not needed: the API key decides the partner. If sent, it must be the key's own partner (else 403 API_KEY_SCOPE_FORBIDDEN)" }),
});

export const handler = httpRoute({ access: 'partner-read', partnerOnly: true, query: Query, doc: listClientsDoc }, async ({ caller, query }) => {
  const page = await listClients(clientStore, caller, { ...query, partnerId: query.partner_id });
  return { status: 200, body: presentPage(page, presentClient) };
});
