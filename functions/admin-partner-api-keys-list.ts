/** GET /api/v1/admin/partners/{partner_id}/api-keys: the partner's keys, newest first, paged, without secrets. */
import { httpRoute } from '../lib/composition/http-route';
import { PartnerParams } from '../lib/http/partner-schemas';
import { presentApiKey, presentPage } from '../lib/http/presenters';
import { PageQuery } from '../lib/http/schemas';
import { partnerDeps } from '../lib/composition/partners';
import { listPartnerApiKeys } from '../lib/use-cases/partners';
import { listPartnerApiKeysDoc } from '../lib/http/route-docs/admin-partners';

export const handler = httpRoute({ access: 'admin', params: PartnerParams, query: PageQuery, doc: listPartnerApiKeysDoc }, async ({ params, query }) => ({
  status: 200,
  body: presentPage(await listPartnerApiKeys(partnerDeps, params.partner_id, query), presentApiKey),
}));
