/** GET /api/v1/admin/partners/{partner_id}/webhook-endpoints: the partner's endpoints (at most 20), without secrets. */
import { httpRoute } from '../lib/http/chain';
import { PartnerParams } from '../lib/http/partner-schemas';
import { presentWebhookEndpoint } from '../lib/http/webhook-presenters';
import { listWebhookEndpoints } from '../lib/use-cases/webhook-endpoints';

export const handler = httpRoute({ access: 'admin', params: PartnerParams }, async ({ params }) => ({
  status: 200,
  body: { items: (await listWebhookEndpoints(params.partner_id)).map(presentWebhookEndpoint) },
}));
