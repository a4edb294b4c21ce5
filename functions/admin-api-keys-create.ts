/** POST /api/v1/admin/api-keys: a platform-wide key; key and HMAC secret shown once. */
import * as z from 'zod';
import { httpRoute } from '../lib/adapters/http-route';
import { presentIssuedApiKey } from '../lib/http/presenters';
import { IssuedApiKey } from '../lib/http/response-schemas';
import type { RouteDoc } from '../lib/http/route-doc';
import { partnerDeps } from '../lib/adapters/partners';
import { issueApiKey } from '../lib/use-cases/partners';

const Body = z.strictObject({ scope: z.literal('platform').meta({ description: 'Always `platform`: a key that may act for any partner' }) });

const doc: RouteDoc = {
  summary: 'Issue a platform-wide API key',
  description:
    'Creates an API key that may act for any partner (a mutation names its partner in the body), and its HMAC secret. ' +
    'Both are shown only in this answer: the key is stored as its SHA-256, the secret encrypted. ' +
    'Partner-only routes (`/clients`) refuse platform-wide keys (403 API_KEY_SCOPE_FORBIDDEN). List the platform-wide keys with ' +
    "`GET /admin/api-keys`. The issue is recorded in the audit log with the key (`api_key.created`, `partner_id` null: the admin, the key's id and scope).",
  tag: 'Admin: partners',
  responses: {
    201: { description: 'The key, its id and its HMAC secret (no `partner_id`)', schema: IssuedApiKey },
  },
  errors: [],
  example: { scope: 'platform' },
};

export const handler = httpRoute({ access: 'admin', body: Body, doc }, async ({ caller }) => ({
  status: 201,
  body: presentIssuedApiKey(await issueApiKey(partnerDeps, 'platform', undefined, caller)),
}));
