/** POST /api/v1/admin/partners: create a partner (decisions.md §2). */
import { httpRoute } from '../lib/http/chain';
import { CreatePartnerBody, toPartnerFields } from '../lib/http/partner-schemas';
import { presentPartner } from '../lib/http/presenters';
import { createPartner } from '../lib/use-cases/partners';

export const handler = httpRoute({ access: 'admin', body: CreatePartnerBody }, async ({ body }) => ({
  status: 201,
  body: presentPartner(await createPartner(toPartnerFields(body))),
}));
