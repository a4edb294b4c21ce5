/** POST /api/v1/admin/partners/{partner_id}/webhook-endpoints: a webhook endpoint; its secret shown once. */
import { webhookEndpointDeps } from '../lib/adapters/webhook-endpoints';
import { httpRoute } from '../lib/adapters/http-route';
import { PartnerParams } from '../lib/http/partner-schemas';
import { CreatedWebhookEndpoint } from '../lib/http/response-schemas';
import type { RouteDoc } from '../lib/http/route-doc';
import { presentCreatedWebhookEndpoint } from '../lib/http/webhook-presenters';
import { CreateWebhookEndpointBody } from '../lib/http/webhook-schemas';
import { createWebhookEndpoint } from '../lib/use-cases/webhook-endpoints';

const doc: RouteDoc = {
  summary: 'Create a webhook endpoint',
  description:
    'Subscribes a partner URL to some events. The answer holds the signing `secret` (`whsec_…`), shown only here: each delivery is ' +
    'signed with it (`X-Svc-Signature`: lowercase hex HMAC-SHA256 of the exact body keyed by the whole secret; also Standard Webhooks ' +
    '`webhook-signature`). The URL must be `https://` and resolve to public addresses only (400 VALIDATION_ERROR on `url` otherwise). ' +
    'A partner has at most 20 endpoints.',
  tag: 'Admin: webhooks',
  responses: {
    201: { description: 'The endpoint, with its secret (shown this once)', schema: CreatedWebhookEndpoint },
  },
  errors: ['PARTNER_NOT_FOUND', 'WEBHOOK_ENDPOINT_LIMIT_REACHED'],
  example: { name: 'Order service (production)', url: 'https://api.example.com/webhooks/payments', events: ['transaction_succeeded', 'transaction_failed'] },
};

export const handler = httpRoute({ access: 'admin', params: PartnerParams, body: CreateWebhookEndpointBody, doc }, async ({ params, body, caller }) => ({
  status: 201,
  body: presentCreatedWebhookEndpoint(await createWebhookEndpoint(webhookEndpointDeps, params.partner_id, body, caller)),
}));
