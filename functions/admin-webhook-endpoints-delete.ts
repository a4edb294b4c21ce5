/** DELETE /api/v1/admin/partners/{partner_id}/webhook-endpoints/{id}: its pending deliveries then fail. */
import { httpRoute } from '../lib/composition/http-route';
import { WebhookEndpointParams } from '../lib/http/webhook-schemas';
import { webhookEndpointDeps } from '../lib/composition/webhook-endpoints';
import { deleteWebhookEndpoint } from '../lib/use-cases/webhook-endpoints';
import { deleteWebhookEndpointDoc } from '../lib/http/route-docs/admin-webhooks';

export const handler = httpRoute({ access: 'admin', params: WebhookEndpointParams, doc: deleteWebhookEndpointDoc }, async ({ params, caller }) => {
  await deleteWebhookEndpoint(webhookEndpointDeps, params.partner_id, params.id, caller);
  return { status: 204 };
});
