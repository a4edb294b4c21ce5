/** DELETE /api/v1/admin/api-keys/{key_id}: revoke a key; it stops working at once. Audited. */
import * as z from 'zod';
import { httpRoute } from '../lib/composition/http-route';
import { partnerDeps } from '../lib/composition/partners';
import { revokeApiKey } from '../lib/use-cases/partners';
import { revokeApiKeyDoc } from '../lib/http/route-docs/admin-partners';

const Params = z.object({ key_id: z.string().min(1).max(64).meta({ description: "The key's id (`key_…`), as its issue answered it", example: 'key_cqvf2a9h0pvbj1bjpspahxfp' }) });

export const handler = httpRoute({ access: 'admin', params: Params, doc: revokeApiKeyDoc }, async ({ params, caller }) => {
  await revokeApiKey(partnerDeps, params.key_id, caller);
  return { status: 204 };
});
