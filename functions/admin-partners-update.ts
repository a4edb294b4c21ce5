/** PATCH /api/v1/admin/partners/{partner_id}: change any of the partner's settings, audited. */
import { httpRoute } from '../lib/composition/http-route';
import { PartnerParams, toPartnerFields, UpdatePartnerBody } from '../lib/http/partner-schemas';
import { presentPartner } from '../lib/http/presenters';
import { partnerDeps } from '../lib/composition/partners';
import { updatePartner } from '../lib/use-cases/partners';
import { updatePartnerDoc } from '../lib/http/route-docs/admin-partners';

export const handler = httpRoute({ access: 'admin', params: PartnerParams, body: UpdatePartnerBody, doc: updatePartnerDoc }, async ({ params, body, caller }) => ({
  status: 200,
  body: presentPartner(await updatePartner(partnerDeps, params.partner_id, toPartnerFields(body), caller)),
}));
