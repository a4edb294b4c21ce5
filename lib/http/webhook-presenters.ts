/** Webhook endpoints, deliveries and audit events as the admin API shows them (decisions.md §2; snake_case). */
import type { AuditEvent } from '../domain/audit';
import { breakerPhase, type BreakerState, NEW_ENDPOINT_BREAKER } from '../domain/endpoint-breaker';
import type { WebhookDelivery, WebhookEndpoint } from '../domain/webhooks';

/** An endpoint's circuit breaker as an operator sees it (docs/webhooks.md): `open_until` only while open. */
const presentCircuit = (breaker: BreakerState, now: number) => {
  const state = breakerPhase(breaker, now);
  return { state, open_until: state === 'open' ? new Date(breaker.openUntil).toISOString() : null };
};

/** An endpoint as listed: never its secret. */
export const presentWebhookEndpoint = (endpoint: WebhookEndpoint, now = Date.now()) => ({
  id: endpoint.id,
  name: endpoint.name,
  url: endpoint.url,
  events: endpoint.events,
  circuit: presentCircuit(endpoint.breaker ?? NEW_ENDPOINT_BREAKER, now),
  created_at: endpoint.createdAt,
});

/** The answer to its creation: the only time the secret is shown. */
export const presentCreatedWebhookEndpoint = ({ endpoint, secret }: { endpoint: WebhookEndpoint; secret: string }) => ({
  ...presentWebhookEndpoint(endpoint),
  secret,
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
