/** GET /api/v1/admin/api-keys: the platform-wide keys (of no partner), newest first, paged, without secrets. */
import { httpRoute } from '../lib/composition/http-route';
import { presentApiKey, presentPage } from '../lib/http/presenters';
import { PageQuery } from '../lib/http/schemas';
import { partnerDeps } from '../lib/composition/partners';
import { listPlatformApiKeys } from '../lib/use-cases/partners';
import { listPlatformApiKeysDoc } from '../lib/http/route-docs/admin-partners';

export const handler = httpRoute({ access: 'admin', query: PageQuery, doc: listPlatformApiKeysDoc }, async ({ query }) => ({
  status: 200,
  body: presentPage(await listPlatformApiKeys(partnerDeps, query), presentApiKey),
}));
