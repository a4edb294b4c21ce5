/** GET /api/v1/admin/api-keys: the platform-wide keys (of no partner), newest first, paged, without secrets. */
import { httpRoute } from '../lib/adapters/http-route';
import { presentApiKey, presentPage } from '../lib/http/presenters';
import { ApiKeyPage } from '../lib/http/response-schemas';
import type { RouteDoc } from '../lib/http/route-doc';
import { PageQuery } from '../lib/http/schemas';
import { partnerDeps } from '../lib/adapters/partners';
import { listPlatformApiKeys } from '../lib/use-cases/partners';

const doc: RouteDoc = {
  summary: 'List the platform-wide API keys',
  description:
    "The API keys of no partner (issued by `POST /admin/api-keys`), newest first, paged by `limit` (1-200, default 50) and `cursor` (the previous page's " +
    '`next_cursor`): their `key_id`, scope and creation time, never the key or its HMAC secret (shown only when issued). A partner\'s keys are listed by ' +
    '`GET /admin/partners/{partner_id}/api-keys`. Revoke one with `DELETE /admin/api-keys/{key_id}`: a revoked key is deleted, so it is no longer listed.',
  tag: 'Admin: partners',
  responses: {
    200: { description: 'One page of the platform-wide keys, newest first', schema: ApiKeyPage },
  },
  errors: [],
};

export const handler = httpRoute({ access: 'admin', query: PageQuery, doc }, async ({ query }) => ({
  status: 200,
  body: presentPage(await listPlatformApiKeys(partnerDeps, query), presentApiKey),
}));
