/** Admin use cases: a partner's webhook endpoints (decisions.md §2, §8) and the audit log. */
import { adminOf, type AuditEvent, type AuditEventType, newAuditEvent } from '../domain/audit';
import type { Caller } from '../domain/caller';
import { errors, fieldValidationError } from '../domain/errors';
import { newId } from '../domain/ids';
import type { Page } from '../domain/page';
import { type SealedSecret, SECRET_PURPOSE } from '../domain/sealed-secret';
import type { PartnerEvent, WebhookEndpoint } from '../domain/webhooks';
import { generateWebhookSecret } from '../webhooks/signing';
import { checkWebhookUrl, type Resolver, UnsafeWebhookUrlError, type UrlPolicy } from '../webhooks/url-safety';
import type { PartnerReader } from './ports/partner-readers';
import type { SecretSealer } from './ports/secret-sealer';

/** A query of the audit log: one partner's or all, optionally of one type, newest first. */
export interface AuditEventQuery {
  partnerId?: string | undefined;
  type?: AuditEventType | undefined;
  limit: number;
  cursor?: string | undefined;
}

/**
 * Where endpoint URLs may point (`ALLOW_INSECURE_WEBHOOK_URLS`) and how their hosts are resolved, the secret box
 * that seals a new endpoint's secret, and the table's endpoints, partners and audit log; wired in
 * `lib/composition/webhook-endpoints.ts`.
 */
export interface WebhookEndpointDeps {
  urlPolicy: UrlPolicy;
  resolve: Resolver;
  secrets: SecretSealer;
  endpoints: {
    /** With the partner's endpoint count and the audit event, in one write (404 for no partner, 409 past 20 endpoints). */
    createWebhookEndpoint(endpoint: WebhookEndpoint, secret: SealedSecret, audit: AuditEvent): Promise<void>;
    listWebhookEndpoints(partnerId: string): Promise<WebhookEndpoint[]>;
    /** With the audit event, in one write (404 WEBHOOK_ENDPOINT_NOT_FOUND). */
    deleteWebhookEndpoint(partnerId: string, endpointId: string, audit: AuditEvent): Promise<void>;
  };
  partners: PartnerReader;
  auditEvents: { listAuditEvents(query: AuditEventQuery): Promise<Page<AuditEvent>> };
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
  await deps.endpoints.createWebhookEndpoint(endpoint, await deps.secrets.seal(secret, SECRET_PURPOSE.webhook), audit);
  return { endpoint, secret };
}

/** A partner's endpoints, newest first, without secrets (404 PARTNER_NOT_FOUND for an unknown partner). */
export async function listWebhookEndpoints(deps: Pick<WebhookEndpointDeps, 'endpoints' | 'partners'>, partnerId: string): Promise<WebhookEndpoint[]> {
  const [partner, found] = await Promise.all([deps.partners.getPartner(partnerId), deps.endpoints.listWebhookEndpoints(partnerId)]);
  if (partner === undefined) throw errors.partnerNotFound();
  return found.sort((a, b) => (a.createdAt === b.createdAt ? b.id.localeCompare(a.id) : b.createdAt.localeCompare(a.createdAt)));
}

/** Deletes an endpoint and records it (atomic); 404 WEBHOOK_ENDPOINT_NOT_FOUND if the partner has no such endpoint. */
export async function deleteWebhookEndpoint(deps: Pick<WebhookEndpointDeps, 'endpoints'>, partnerId: string, endpointId: string, by?: Caller): Promise<void> {
  const audit = endpointAudit({ id: endpointId, partnerId }, 'webhook_endpoint.deleted', { admin: adminOf(by) });
  await deps.endpoints.deleteWebhookEndpoint(partnerId, endpointId, audit);
}

/** The audit log, newest first. */
export const listAuditEvents = (deps: Pick<WebhookEndpointDeps, 'auditEvents'>, query: AuditEventQuery) => deps.auditEvents.listAuditEvents(query);
