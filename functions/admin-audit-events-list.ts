/** GET /api/v1/admin/audit-events: newest first, `partner_id` and `type` filters, paged. */
import { httpRoute } from '../lib/composition/http-route';
import { presentPage } from '../lib/http/presenters';
import { presentAuditEvent } from '../lib/http/webhook-presenters';
import { AuditEventsQuery } from '../lib/http/webhook-schemas';
import { webhookEndpointDeps } from '../lib/composition/webhook-endpoints';
import { listAuditEvents } from '../lib/use-cases/webhook-endpoints';
import { listAuditEventsDoc } from '../lib/http/route-docs/admin-webhooks';

export const handler = httpRoute({ access: 'admin', query: AuditEventsQuery, doc: listAuditEventsDoc }, async ({ query }) => ({
  status: 200,
  body: presentPage(await listAuditEvents(webhookEndpointDeps, { partnerId: query.partner_id, type: query.type, limit: query.limit, cursor: query.cursor }), presentAuditEvent),
}));
