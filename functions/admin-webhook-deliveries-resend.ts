/** POST /api/v1/admin/webhook-deliveries/{id}/resend: a new delivery of the same event (same event id). */
import { httpRoute } from '../lib/adapters/http-route';
import { WebhookDelivery } from '../lib/http/response-schemas';
import type { RouteDoc } from '../lib/http/route-doc';
import { presentDelivery } from '../lib/http/webhook-presenters';
import { DeliveryParams } from '../lib/http/webhook-schemas';
import { deliveryAdminDeps } from '../lib/adapters/webhook-delivery-admin';
import { resendDelivery } from '../lib/use-cases/webhook-deliveries';

const doc: RouteDoc = {
  summary: 'Resend a webhook delivery',
  description:
    'Creates a new delivery (new id, `pending`, no attempts) of the same event to the same endpoint: same `event_id`, same body byte ' +
    'for byte, so the partner can deduplicate it. Any delivery may be resent, whatever its status; it is sent shortly after this answer. ' +
    'The endpoint must still exist (409 WEBHOOK_ENDPOINT_DELETED).',
  tag: 'Admin: webhooks',
  responses: {
    202: { description: 'The new delivery, queued', schema: WebhookDelivery },
  },
  errors: ['WEBHOOK_DELIVERY_NOT_FOUND', 'WEBHOOK_ENDPOINT_DELETED'],
};

export const handler = httpRoute({ access: 'admin', params: DeliveryParams, doc }, async ({ params }) => ({
  status: 202,
  body: presentDelivery(await resendDelivery(deliveryAdminDeps, params.id)),
}));
