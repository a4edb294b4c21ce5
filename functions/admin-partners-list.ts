/** GET /api/v1/admin/partners: all partners, newest first, paged. */
import { httpRoute } from '../lib/adapters/http-route';
import { presentPage, presentPartner } from '../lib/http/presenters';
import { pageOf, Partner } from '../lib/http/response-schemas';
import type { RouteDoc } from '../lib/http/route-doc';
import { PageQuery } from '../lib/http/schemas';
import { partnerDeps } from '../lib/adapters/partners';
import { listPartners } from '../lib/use-cases/partners';

const doc: RouteDoc = {
  summary: 'List partners',
  description: "Every partner, newest first, paged by `limit` (1-200, default 50) and `cursor` (the previous page's `next_cursor`).",
  tag: 'Admin: partners',
  responses: {
    200: { description: 'One page of partners, newest first', schema: pageOf(Partner, 'PartnerPage') },
  },
  errors: [],
};

export const handler = httpRoute({ access: 'admin', query: PageQuery, doc }, async ({ query }) => ({
  status: 200,
  body: presentPage(await listPartners(partnerDeps, query), presentPartner),
}));
