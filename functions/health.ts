/** GET /api/v1/health: liveness of the API. Locally the server only listens once the table is ready. */
import { httpRoute } from '../lib/http/chain';

export const checkHealth = async () => ({ status: 200, body: { status: 'ok' } });

export const handler = httpRoute({ access: 'public' }, checkHealth);
