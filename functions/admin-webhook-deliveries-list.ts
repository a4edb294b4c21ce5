/** GET /api/v1/admin/partners/{partner_id}/webhook-deliveries: newest first, `status` filter, paged. */
import { httpRoute } from '../lib/adapters/http-route';
import { PartnerParams } from '../lib/http/partner-schemas';
import { presentPage } from '../lib/http/presenters';
import { pageOf, WebhookDelivery } from '../lib/http/response-schemas';
import type { RouteDoc } from '../lib/http/route-doc';
import { presentDelivery } from '../lib/http/webhook-presenters';
import { DeliveriesQuery } from '../lib/http/webhook-schemas';
import { deliveryAdminDeps } from '../lib/adapters/webhook-delivery-admin';
import { listPartnerDeliveries } from '../lib/use-cases/webhook-deliveries';

const doc: RouteDoc = {
  summary: "List a partner's webhook deliveries",
  description:
    'One delivery per event and subscribed endpoint, attempted up to 3 times with exponential backoff: `pending` while attempts are ' +
    'left, `succeeded` on a 2xx answer, `failed` once they are used up or the endpoint is deleted (it can then be resent). ' +
    "Newest first, paged by `limit` (1-200, default 50) and `cursor` (the previous page's `next_cursor`, with the same filter); filter by `status`.",
  tag: 'Admin: webhooks',
  responses: {
    200: { description: 'One page of deliveries, newest first', schema: pageOf(WebhookDelivery, 'WebhookDeliveryPage') },
  },
  errors: ['PARTNER_NOT_FOUND'],
};

export const handler = httpRoute({ access: 'admin', params: PartnerParams, query: DeliveriesQuery, doc }, async ({ params, query }) => ({
  status: 200,
  body: presentPage(await listPartnerDeliveries(deliveryAdminDeps, params.partner_id, query), presentDelivery),
}));
