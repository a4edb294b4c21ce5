/** POST /api/v1/admin/webhook-deliveries/{id}/resend: a new delivery of the same event (same event id). */
import { httpRoute } from '../lib/composition/http-route';
import { presentDelivery } from '../lib/http/webhook-presenters';
import { DeliveryParams } from '../lib/http/webhook-schemas';
import { deliveryAdminDeps } from '../lib/composition/webhook-delivery-admin';
import { resendDelivery } from '../lib/use-cases/webhook-deliveries';
import { resendWebhookDeliveryDoc } from '../lib/http/route-docs/admin-webhooks';

export const handler = httpRoute({ access: 'admin', params: DeliveryParams, doc: resendWebhookDeliveryDoc }, async ({ params }) => ({
  status: 202,
  body: presentDelivery(await resendDelivery(deliveryAdminDeps, params.id)),
}));
