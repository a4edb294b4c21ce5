/** GET /api/v1/admin/audit-events: newest first, `partner_id` and `type` filters, paged. */
import { httpRoute } from '../lib/adapters/http-route';
import { presentPage } from '../lib/http/presenters';
import { AuditEvent, pageOf } from '../lib/http/response-schemas';
import type { RouteDoc } from '../lib/http/route-doc';
import { presentAuditEvent } from '../lib/http/webhook-presenters';
import { AuditEventsQuery } from '../lib/http/webhook-schemas';
import { webhookEndpointDeps } from '../lib/adapters/webhook-endpoints';
import { listAuditEvents } from '../lib/use-cases/webhook-endpoints';

const doc: RouteDoc = {
  summary: 'List audit events',
  description:
    'The append-only log of what happened to partner webhooks (endpoints created and deleted, delivery attempts that failed, ' +
    'deliveries that succeeded, failed or were resent) and of what admins did: partners created and updated, API keys issued and revoked, ' +
    'settlement runs and payouts started (`details.admin`: the admin token\'s subject; never a secret). Each event is written in the same ' +
    'transaction as the change it records (a settlement run: before it starts). Platform-wide keys\' events have a null `partner_id`. ' +
    'Newest first, paged by `limit` (1-200, default 50) and `cursor` (the previous page\'s `next_cursor`, with the same filters); ' +
    'filter by `partner_id` and `type`.',
  tag: 'Admin: webhooks',
  responses: {
    200: { description: 'One page of audit events, newest first', schema: pageOf(AuditEvent, 'AuditEventPage') },
  },
  errors: [],
};

export const handler = httpRoute({ access: 'admin', query: AuditEventsQuery, doc }, async ({ query }) => ({
  status: 200,
  body: presentPage(await listAuditEvents(webhookEndpointDeps, { partnerId: query.partner_id, type: query.type, limit: query.limit, cursor: query.cursor }), presentAuditEvent),
}));
