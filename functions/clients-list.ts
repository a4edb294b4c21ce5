/** GET /api/v1/clients: the partner's merchants, newest first, paged, optional `status` filter. */
import * as z from 'zod';
import { CLIENT_STATUSES } from '../lib/domain/partner';
import { httpRoute } from '../lib/adapters/http-route';
import { presentClient, presentPage } from '../lib/http/presenters';
import { Client, pageOf } from '../lib/http/response-schemas';
import type { RouteDoc } from '../lib/http/route-doc';
import { PageQuery } from '../lib/http/schemas';
import { clientStore } from '../lib/adapters/clients';
import { listClients } from '../lib/use-cases/clients';

const Query = PageQuery.extend({
  status: z.enum(CLIENT_STATUSES).optional().meta({ description: 'Only clients in this status', example: 'active' }),
  partner_id: z
    .string()
    .optional()
    .meta({ description: "Not needed: the API key decides the partner. If sent, it must be the key's own partner (else 403 API_KEY_SCOPE_FORBIDDEN)" }),
});

const doc: RouteDoc = {
  summary: "List the partner's merchants (clients)",
  description:
    "The merchants of the API key's partner, newest first (`created_at` descending), paged with `limit` and `cursor`. Needs a partner-scoped key " +
    '(a platform-wide key is 403 API_KEY_SCOPE_FORBIDDEN); a suspended partner is 403 PARTNER_SUSPENDED.',
  tag: 'Clients',
  responses: {
    200: { description: 'One page of clients, newest first', schema: pageOf(Client, 'ClientPage') },
  },
  errors: ['PARTNER_NOT_FOUND', 'PARTNER_SUSPENDED'],
};

export const handler = httpRoute({ access: 'partner-read', partnerOnly: true, query: Query, doc }, async ({ caller, query }) => {
  const page = await listClients(clientStore, caller, { ...query, partnerId: query.partner_id });
  return { status: 200, body: presentPage(page, presentClient) };
});
