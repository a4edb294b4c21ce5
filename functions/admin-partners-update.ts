/** PATCH /api/v1/admin/partners/{partner_id}: change any of the partner's settings. */
import { httpRoute } from '../lib/http/chain';
import { PartnerParams, toPartnerFields, UpdatePartnerBody } from '../lib/http/partner-schemas';
import { presentPartner } from '../lib/http/presenters';
import { updatePartner } from '../lib/use-cases/partners';

export const handler = httpRoute({ access: 'admin', params: PartnerParams, body: UpdatePartnerBody }, async ({ params, body }) => ({
  status: 200,
  body: presentPartner(await updatePartner(params.partner_id, toPartnerFields(body))),
}));
