/** POST /api/v1/admin/partners/{partner_id}/api-keys: a partner-scoped key; key and HMAC secret shown once. */
import * as z from 'zod';
import { httpRoute } from '../lib/adapters/http-route';
import { presentIssuedApiKey } from '../lib/http/presenters';
import { partnerDeps } from '../lib/adapters/partners';
import { issueApiKey } from '../lib/use-cases/partners';
import { PartnerParams } from '../lib/http/partner-schemas';
import { IssuedApiKey } from '../lib/http/response-schemas';
import type { RouteDoc } from '../lib/http/route-doc';

const Body = z.strictObject({ scope: z.literal('partner').meta({ description: 'Always `partner`: a key that acts for this partner only' }) });

const doc: RouteDoc = {
  summary: 'Issue an API key for a partner',
  description:
    'Creates an API key scoped to the partner, and its HMAC secret. Both are shown only in this answer: the key is stored as its ' +
    'SHA-256, the secret encrypted. The partner must exist when the key is written. A partner may hold several keys (rotation: ' +
    'issue a new one, then revoke the old one). The issue is recorded in the audit log with the key (`api_key.created`: the admin, ' +
    "the key's id and scope; never the key or its secret).",
  tag: 'Admin: partners',
  responses: {
    201: { description: 'The key, its id, its HMAC secret and its `partner_id`', schema: IssuedApiKey },
  },
  errors: ['PARTNER_NOT_FOUND'],
  example: { scope: 'partner' },
};

export const handler = httpRoute({ access: 'admin', params: PartnerParams, body: Body, doc }, async ({ params, caller }) => ({
  status: 201,
  body: presentIssuedApiKey(await issueApiKey(partnerDeps, 'partner', params.partner_id, caller)),
}));
