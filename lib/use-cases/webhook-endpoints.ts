/** Admin use cases: a partner's webhook endpoints (decisions.md §2, §8) and the audit log. */
import { adminOf, type AuditEvent, type AuditEventType, newAuditEvent } from '../domain/audit';
import type { Caller } from '../domain/caller';
import { errors, fieldValidationError } from '../domain/errors';
import { newId } from '../domain/ids';
import type { PartnerEvent, WebhookEndpoint } from '../domain/webhooks';
import { SECRET_PURPOSE, secretBox } from '../secrets';
import * as auditEvents from '../store/audit-events';
import * as partners from '../store/partners';
import * as endpoints from '../store/webhook-endpoints';
import { generateWebhookSecret } from '../webhooks/signing';
import { checkWebhookUrl, type Resolver, UnsafeWebhookUrlError, type UrlPolicy } from '../webhooks/url-safety';

/** Where endpoint URLs may point (`ALLOW_INSECURE_WEBHOOK_URLS`) and how their hosts are resolved; see `lib/adapters/`. */
export interface WebhookEndpointDeps {
  urlPolicy: UrlPolicy;
  resolve: Resolver;
}

export interface NewWebhookEndpoint {
  name: string;
  url: string;
  events: PartnerEvent[];
}

const endpointAudit = (endpoint: Pick<WebhookEndpoint, 'id' | 'partnerId'>, type: AuditEventType, details: AuditEvent['details']): AuditEvent =>
  newAuditEvent({ type, partnerId: endpoint.partnerId, resourceType: 'webhook_endpoint', resourceId: endpoint.id, details }, new Date());

/**
 * Creates an endpoint. Steps: check the URL (https, no credentials, every address its host resolves to
 * public; 400 VALIDATION_ERROR on `url` otherwise); generate the secret; seal it (envelope encryption, purpose
 * webhook); write the endpoint, the partner's endpoint count and the audit event in one transaction
 * (conditional: the partner exists, 404; it has fewer than 20 endpoints, 409). The plaintext secret is
 * returned once and never stored.
 */
export async function createWebhookEndpoint(
  deps: WebhookEndpointDeps,
  partnerId: string,
  input: NewWebhookEndpoint,
  by?: Caller,
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  let url: string;
  try {
    url = await checkWebhookUrl(input.url, deps.urlPolicy, deps.resolve);
  } catch (error) {
    if (error instanceof UnsafeWebhookUrlError) throw fieldValidationError('url', error.message);
    throw error;
  }
  const secret = generateWebhookSecret();
  const endpoint: WebhookEndpoint = {
    id: newId.webhookEndpoint(),
    partnerId,
    name: input.name,
    url,
    events: input.events,
    createdAt: new Date().toISOString(),
  };
  const audit = endpointAudit(endpoint, 'webhook_endpoint.created', { admin: adminOf(by), name: endpoint.name, events: endpoint.events.join(',') });
  await endpoints.createWebhookEndpoint(endpoint, await secretBox.seal(secret, SECRET_PURPOSE.webhook), audit);
  return { endpoint, secret };
}

/** A partner's endpoints, newest first, without secrets (404 PARTNER_NOT_FOUND for an unknown partner). */
export async function listWebhookEndpoints(partnerId: string): Promise<WebhookEndpoint[]> {
  const [partner, found] = await Promise.all([partners.getPartner(partnerId), endpoints.listWebhookEndpoints(partnerId)]);
  if (partner === undefined) throw errors.partnerNotFound();
  return found.sort((a, b) => (a.createdAt === b.createdAt ? b.id.localeCompare(a.id) : b.createdAt.localeCompare(a.createdAt)));
}

/** Deletes an endpoint and records it (atomic); 404 WEBHOOK_ENDPOINT_NOT_FOUND if the partner has no such endpoint. */
export async function deleteWebhookEndpoint(partnerId: string, endpointId: string, by?: Caller): Promise<void> {
  await endpoints.deleteWebhookEndpoint(partnerId, endpointId, endpointAudit({ id: endpointId, partnerId }, 'webhook_endpoint.deleted', { admin: adminOf(by) }));
}

export const listAuditEvents = (query: {
  partnerId?: string | undefined;
  type?: AuditEventType | undefined;
  limit: number;
  cursor?: string | undefined;
}) => auditEvents.listAuditEvents(query);
