/** POST /api/v1/admin/partners/{partner_id}/api-keys: a partner-scoped key; key and HMAC secret shown once. */
import * as z from 'zod';
import { httpRoute } from '../lib/composition/http-route';
import { presentIssuedApiKey } from '../lib/http/presenters';
import { partnerDeps } from '../lib/composition/partners';
import { issueApiKey } from '../lib/use-cases/partners';
import { PartnerParams } from '../lib/http/partner-schemas';
import { issuePartnerApiKeyDoc } from '../lib/http/route-docs/admin-partners';

const Body = z.strictObject({ scope: z.literal('partner').meta({ description: 'Always `partner`: a key that acts for this partner only' }) });

export const handler = httpRoute({ access: 'admin', params: PartnerParams, body: Body, doc: issuePartnerApiKeyDoc }, async ({ params, caller }) => ({
  status: 201,
  body: presentIssuedApiKey(await issueApiKey(partnerDeps, 'partner', params.partner_id, caller)),
}));
