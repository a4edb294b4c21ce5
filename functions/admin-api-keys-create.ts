/** POST /api/v1/admin/api-keys: a platform-wide key; key and HMAC secret shown once. */
import * as z from 'zod';
import { httpRoute } from '../lib/http/chain';
import { presentIssuedApiKey } from '../lib/http/presenters';
import { issueApiKey } from '../lib/use-cases/partners';

const Body = z.strictObject({ scope: z.literal('platform') });

export const handler = httpRoute({ access: 'admin', body: Body }, async () => ({
  status: 201,
  body: presentIssuedApiKey(await issueApiKey('platform')),
}));
