/** GET /api/v1/admin/partners/{partner_id}. */
import { httpRoute } from '../lib/adapters/http-route';
import { PartnerParams } from '../lib/http/partner-schemas';
import { presentPartner } from '../lib/http/presenters';
import { Partner } from '../lib/http/response-schemas';
import type { RouteDoc } from '../lib/http/route-doc';
import { partnerDeps } from '../lib/adapters/partners';
import { getPartner } from '../lib/use-cases/partners';

const doc: RouteDoc = {
  summary: 'Get a partner',
  description: 'The partner as stored now (a strongly consistent read).',
  tag: 'Admin: partners',
  responses: {
    200: { description: 'The partner', schema: Partner },
  },
  errors: ['PARTNER_NOT_FOUND'],
};

export const handler = httpRoute({ access: 'admin', params: PartnerParams, doc }, async ({ params }) => ({
  status: 200,
  body: presentPartner(await getPartner(partnerDeps, params.partner_id)),
}));
