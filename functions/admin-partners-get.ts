/** GET /api/v1/admin/partners/{partner_id}. */
import { httpRoute } from '../lib/composition/http-route';
import { PartnerParams } from '../lib/http/partner-schemas';
import { presentPartner } from '../lib/http/presenters';
import { partnerDeps } from '../lib/composition/partners';
import { getPartner } from '../lib/use-cases/partners';
import { getPartnerDoc } from '../lib/http/route-docs/admin-partners';

export const handler = httpRoute({ access: 'admin', params: PartnerParams, doc: getPartnerDoc }, async ({ params }) => ({
  status: 200,
  body: presentPartner(await getPartner(partnerDeps, params.partner_id)),
}));
