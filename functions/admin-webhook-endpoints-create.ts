/** POST /api/v1/admin/partners/{partner_id}/webhook-endpoints: a webhook endpoint; its secret shown once. */
import { webhookEndpointDeps } from '../lib/composition/webhook-endpoints';
import { httpRoute } from '../lib/composition/http-route';
import { PartnerParams } from '../lib/http/partner-schemas';
import { presentCreatedWebhookEndpoint } from '../lib/http/webhook-presenters';
import { CreateWebhookEndpointBody } from '../lib/http/webhook-schemas';
import { createWebhookEndpoint } from '../lib/use-cases/webhook-endpoints';
import { createWebhookEndpointDoc } from '../lib/http/route-docs/admin-webhooks';

export const handler = httpRoute({ access: 'admin', params: PartnerParams, body: CreateWebhookEndpointBody, doc: createWebhookEndpointDoc }, async ({ params, body, caller }) => ({
  status: 201,
  body: presentCreatedWebhookEndpoint(await createWebhookEndpoint(webhookEndpointDeps, params.partner_id, body, caller)),
}));
