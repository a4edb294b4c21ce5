/** DELETE /api/v1/admin/api-keys/{key_id}: revoke a key; it stops working at once. Audited. */
import * as z from 'zod';
import { httpRoute } from '../lib/adapters/http-route';
import type { RouteDoc } from '../lib/http/route-doc';
import { partnerDeps } from '../lib/adapters/partners';
import { revokeApiKey } from '../lib/use-cases/partners';

const Params = z.object({ key_id: z.string().min(1).max(64).meta({ description: "The key's id (`key_…`), as its issue answered it", example: 'key_cqvf2a9h0pvbj1bjpspahxfp' }) });

const doc: RouteDoc = {
  summary: 'Revoke an API key',
  description:
    'Deletes the key (partner-scoped or platform-wide): it is refused from the very next request (401 API_KEY_INVALID). A key already revoked is 404. ' +
    "The revocation is recorded in the audit log with it (`api_key.revoked`: the admin and the key's scope, under its partner).",
  tag: 'Admin: partners',
  responses: {
    204: { description: 'Revoked' },
  },
  errors: ['API_KEY_NOT_FOUND'],
};

export const handler = httpRoute({ access: 'admin', params: Params, doc }, async ({ params, caller }) => {
  await revokeApiKey(partnerDeps, params.key_id, caller);
  return { status: 204 };
});
