/** DELETE /api/v1/admin/partners/{partner_id}/webhook-endpoints/{id}: its pending deliveries then fail. */
import { httpRoute } from '../lib/adapters/http-route';
import type { RouteDoc } from '../lib/http/route-doc';
import { WebhookEndpointParams } from '../lib/http/webhook-schemas';
import { webhookEndpointDeps } from '../lib/adapters/webhook-endpoints';
import { deleteWebhookEndpoint } from '../lib/use-cases/webhook-endpoints';

const doc: RouteDoc = {
  summary: 'Delete a webhook endpoint',
  description:
    "Deletes the endpoint (recorded in the audit log). Its pending deliveries fail at their next attempt and can no longer be resent. " +
    'An endpoint of another partner, or one already deleted, is 404.',
  tag: 'Admin: webhooks',
  responses: {
    204: { description: 'Deleted' },
  },
  errors: ['WEBHOOK_ENDPOINT_NOT_FOUND'],
};

export const handler = httpRoute({ access: 'admin', params: WebhookEndpointParams, doc }, async ({ params, caller }) => {
  await deleteWebhookEndpoint(webhookEndpointDeps, params.partner_id, params.id, caller);
  return { status: 204 };
});
