/** GET /api/v1/admin/partners: all partners, newest first, paged. */
import { httpRoute } from '../lib/http/chain';
import { presentPage, presentPartner } from '../lib/http/presenters';
import { PageQuery } from '../lib/http/schemas';
import { listPartners } from '../lib/use-cases/partners';

export const handler = httpRoute({ access: 'admin', query: PageQuery }, async ({ query }) => ({
  status: 200,
  body: presentPage(await listPartners(query), presentPartner),
}));
