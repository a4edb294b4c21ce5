/** DELETE /api/v1/admin/partners/{partner_id}/webhook-endpoints/{id}: its pending deliveries then fail. */
import { httpRoute } from '../lib/http/chain';
import { WebhookEndpointParams } from '../lib/http/webhook-schemas';
import { deleteWebhookEndpoint } from '../lib/use-cases/webhook-endpoints';

export const handler = httpRoute({ access: 'admin', params: WebhookEndpointParams }, async ({ params }) => {
  await deleteWebhookEndpoint(params.partner_id, params.id);
  return { status: 204 };
});
