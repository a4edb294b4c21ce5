/** POST /api/v1/admin/partners: create a partner (decisions.md §2), audited. */
import { httpRoute } from '../lib/composition/http-route';
import { CreatePartnerBody, toPartnerFields } from '../lib/http/partner-schemas';
import { presentPartner } from '../lib/http/presenters';
import { partnerDeps } from '../lib/composition/partners';
import { createPartner } from '../lib/use-cases/partners';
import { createPartnerDoc } from '../lib/http/route-docs/admin-partners';

export const handler = httpRoute({ access: 'admin', body: CreatePartnerBody, doc: createPartnerDoc }, async ({ body, caller }) => ({
  status: 201,
  body: presentPartner(await createPartner(partnerDeps, toPartnerFields(body), caller)),
}));
