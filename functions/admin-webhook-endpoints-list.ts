/** GET /api/v1/admin/partners/{partner_id}/webhook-endpoints: the partner's endpoints (at most 20), without secrets. */
import { httpRoute } from '../lib/composition/http-route';
import { PartnerParams } from '../lib/http/partner-schemas';
import { presentWebhookEndpoint } from '../lib/http/webhook-presenters';
import { webhookEndpointDeps } from '../lib/composition/webhook-endpoints';
import { listWebhookEndpoints } from '../lib/use-cases/webhook-endpoints';
import { listWebhookEndpointsDoc } from '../lib/http/route-docs/admin-webhooks';

export const handler = httpRoute({ access: 'admin', params: PartnerParams, doc: listWebhookEndpointsDoc }, async ({ params }) => ({
  status: 200,
  body: { items: (await listWebhookEndpoints(webhookEndpointDeps, params.partner_id)).map((endpoint) => presentWebhookEndpoint(endpoint)) },
}));
