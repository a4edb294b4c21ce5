/** POST /api/v1/admin/webhook-deliveries/{id}/resend: a new delivery of the same event (same event id). */
import { httpRoute } from '../lib/http/chain';
import { presentDelivery } from '../lib/http/webhook-presenters';
import { DeliveryParams } from '../lib/http/webhook-schemas';
import { resendDelivery } from '../lib/use-cases/webhook-deliveries';

export const handler = httpRoute({ access: 'admin', params: DeliveryParams }, async ({ params }) => ({
  status: 202,
  body: presentDelivery(await resendDelivery(params.id)),
}));
