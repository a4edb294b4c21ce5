/** GET /api/v1/admin/partners/{partner_id}/api-keys: the partner's keys, newest first, paged, without secrets. */
import { httpRoute } from '../lib/adapters/http-route';
import { PartnerParams } from '../lib/http/partner-schemas';
import { presentApiKey, presentPage } from '../lib/http/presenters';
import { ApiKeyPage } from '../lib/http/response-schemas';
import type { RouteDoc } from '../lib/http/route-doc';
import { PageQuery } from '../lib/http/schemas';
import { partnerDeps } from '../lib/adapters/partners';
import { listPartnerApiKeys } from '../lib/use-cases/partners';

const doc: RouteDoc = {
  summary: "List a partner's API keys",
  description:
    "The partner's API keys, newest first, paged by `limit` (1-200, default 50) and `cursor` (the previous page's `next_cursor`): their " +
    '`key_id`, scope and creation time, never the key or its HMAC secret (shown only when issued). Revoke one with ' +
    '`DELETE /admin/api-keys/{key_id}`: a revoked key is deleted, so it is no longer listed. Platform-wide keys are listed by `GET /admin/api-keys`.',
  tag: 'Admin: partners',
  responses: {
    200: { description: "One page of the partner's keys, newest first", schema: ApiKeyPage },
  },
  errors: ['PARTNER_NOT_FOUND'],
};

export const handler = httpRoute({ access: 'admin', params: PartnerParams, query: PageQuery, doc }, async ({ params, query }) => ({
  status: 200,
  body: presentPage(await listPartnerApiKeys(partnerDeps, params.partner_id, query), presentApiKey),
}));
