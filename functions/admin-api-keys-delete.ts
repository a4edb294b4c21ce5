/** DELETE /api/v1/admin/api-keys/{key_id}: revoke a key; it stops working at once. */
import * as z from 'zod';
import { httpRoute } from '../lib/http/chain';
import { revokeApiKey } from '../lib/use-cases/partners';

const Params = z.object({ key_id: z.string().min(1).max(64) });

export const handler = httpRoute({ access: 'admin', params: Params }, async ({ params }) => {
  await revokeApiKey(params.key_id);
  return { status: 204 };
});
