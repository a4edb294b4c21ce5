/** POST /api/v1/admin/api-keys: a platform-wide key; key and HMAC secret shown once. */
import * as z from 'zod';
import { httpRoute } from '../lib/composition/http-route';
import { presentIssuedApiKey } from '../lib/http/presenters';
import { partnerDeps } from '../lib/composition/partners';
import { issueApiKey } from '../lib/use-cases/partners';
import { issuePlatformApiKeyDoc } from '../lib/http/route-docs/admin-partners';

const Body = z.strictObject({ scope: z.literal('platform').meta({ description: 'Always `platform`: a key that may act for any partner' }) });

export const handler = httpRoute({ access: 'admin', body: Body, doc: issuePlatformApiKeyDoc }, async ({ caller }) => ({
  status: 201,
  body: presentIssuedApiKey(await issueApiKey(partnerDeps, 'platform', undefined, caller)),
}));
