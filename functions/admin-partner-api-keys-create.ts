/** POST /api/v1/admin/partners/{partner_id}/api-keys: a partner-scoped key; key and HMAC secret shown once. */
import * as z from 'zod';
import { httpRoute } from '../lib/http/chain';
import { presentIssuedApiKey } from '../lib/http/presenters';
import { issueApiKey } from '../lib/use-cases/partners';
import { PartnerParams } from '../lib/http/partner-schemas';

const Body = z.strictObject({ scope: z.literal('partner') });

export const handler = httpRoute({ access: 'admin', params: PartnerParams, body: Body }, async ({ params }) => ({
  status: 201,
  body: presentIssuedApiKey(await issueApiKey('partner', params.partner_id)),
}));
