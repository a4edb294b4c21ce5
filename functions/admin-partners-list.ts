/** GET /api/v1/admin/partners: all partners, newest first, paged. */
import { httpRoute } from '../lib/composition/http-route';
import { presentPage, presentPartner } from '../lib/http/presenters';
import { PageQuery } from '../lib/http/schemas';
import { partnerDeps } from '../lib/composition/partners';
import { listPartners } from '../lib/use-cases/partners';
import { listPartnersDoc } from '../lib/http/route-docs/admin-partners';

export const handler = httpRoute({ access: 'admin', query: PageQuery, doc: listPartnersDoc }, async ({ query }) => ({
  status: 200,
  body: presentPage(await listPartners(partnerDeps, query), presentPartner),
}));
