/** Webhook endpoints, deliveries and audit events as the admin API shows them (decisions.md §2; snake_case). */
import type { AuditEvent } from '../domain/audit';
import type { WebhookDelivery, WebhookEndpoint } from '../domain/webhooks';

/** An endpoint as listed: never its secret. */
export const presentWebhookEndpoint = (endpoint: WebhookEndpoint) => ({
  id: endpoint.id,
  name: endpoint.name,
  url: endpoint.url,
  events: endpoint.events,
  created_at: endpoint.createdAt,
});

/** The answer to its creation: the only time the secret is shown. */
export const presentCreatedWebhookEndpoint = ({ endpoint, secret }: { endpoint: WebhookEndpoint; secret: string }) => ({
  id: endpoint.id,
  name: endpoint.name,
  url: endpoint.url,
  events: endpoint.events,
  secret,
  created_at: endpoint.createdAt,
});

export const presentDelivery = (delivery: WebhookDelivery) => ({
  id: delivery.id,
  event_id: delivery.eventId,
  endpoint_id: delivery.endpointId,
  event: delivery.event,
  svc_tx_id: delivery.svcTxId,
  status: delivery.status,
  attempts: delivery.attempts,
  last_http_status: delivery.lastHttpStatus,
  last_error: delivery.lastError,
  created_at: delivery.createdAt,
  updated_at: delivery.updatedAt,
});

export const presentAuditEvent = (event: AuditEvent) => ({
  id: event.id,
  type: event.type,
  partner_id: event.partnerId,
  resource_type: event.resourceType,
  resource_id: event.resourceId,
  details: event.details,
  created_at: event.createdAt,
});
