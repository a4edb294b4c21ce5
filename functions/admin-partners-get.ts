/** GET /api/v1/admin/partners/{partner_id}. */
import { httpRoute } from '../lib/http/chain';
import { PartnerParams } from '../lib/http/partner-schemas';
import { presentPartner } from '../lib/http/presenters';
import { getPartner } from '../lib/use-cases/partners';

export const handler = httpRoute({ access: 'admin', params: PartnerParams }, async ({ params }) => ({
  status: 200,
  body: presentPartner(await getPartner(params.partner_id)),
}));
