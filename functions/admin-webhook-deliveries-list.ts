/** GET /api/v1/admin/partners/{partner_id}/webhook-deliveries: newest first, `status` filter, paged. */
import { httpRoute } from '../lib/composition/http-route';
import { PartnerParams } from '../lib/http/partner-schemas';
import { presentPage } from '../lib/http/presenters';
import { presentDelivery } from '../lib/http/webhook-presenters';
import { DeliveriesQuery } from '../lib/http/webhook-schemas';
import { deliveryAdminDeps } from '../lib/composition/webhook-delivery-admin';
import { listPartnerDeliveries } from '../lib/use-cases/webhook-deliveries';
import { listWebhookDeliveriesDoc } from '../lib/http/route-docs/admin-webhooks';

export const handler = httpRoute({ access: 'admin', params: PartnerParams, query: DeliveriesQuery, doc: listWebhookDeliveriesDoc }, async ({ params, query }) => ({
  status: 200,
  body: presentPage(await listPartnerDeliveries(deliveryAdminDeps, params.partner_id, query), presentDelivery),
}));
