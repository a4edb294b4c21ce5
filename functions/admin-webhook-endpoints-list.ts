/** GET /api/v1/admin/partners/{partner_id}/webhook-endpoints: the partner's endpoints (at most 20), without secrets. */
import * as z from 'zod';
import { httpRoute } from '../lib/adapters/http-route';
import { PartnerParams } from '../lib/http/partner-schemas';
import { WebhookEndpoint } from '../lib/http/response-schemas';
import type { RouteDoc } from '../lib/http/route-doc';
import { presentWebhookEndpoint } from '../lib/http/webhook-presenters';
import { webhookEndpointDeps } from '../lib/adapters/webhook-endpoints';
import { listWebhookEndpoints } from '../lib/use-cases/webhook-endpoints';

/** `{ items }` only: the list is whole (at most 20), so it has no `next_cursor` and `pageOf` does not fit it. */
const WebhookEndpointList = z.strictObject({ items: z.array(WebhookEndpoint) }).meta({ id: 'WebhookEndpointList' });

const doc: RouteDoc = {
  summary: "List a partner's webhook endpoints",
  description: 'Every endpoint of the partner (at most 20), newest first, in one answer (no paging). Secrets are never shown again.',
  tag: 'Admin: webhooks',
  responses: {
    200: { description: "The partner's endpoints, without secrets", schema: WebhookEndpointList },
  },
  errors: ['PARTNER_NOT_FOUND'],
};

export const handler = httpRoute({ access: 'admin', params: PartnerParams, doc }, async ({ params }) => ({
  status: 200,
  body: { items: (await listWebhookEndpoints(webhookEndpointDeps, params.partner_id)).map((endpoint) => presentWebhookEndpoint(endpoint)) },
}));
