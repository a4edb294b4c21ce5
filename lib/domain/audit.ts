/**
 * Audit events (decisions.md §2 `GET /admin/audit-events`): an append-only record of what happened to partner
 * webhooks, written in the same DynamoDB transaction as the change it records, so the log and the state never
 * disagree. Pure: no I/O.
 */

export const AUDIT_EVENT_TYPES = [
  /** A delivery answered 2xx (the delivery is `succeeded`). */
  'webhook_delivery.succeeded',
  /** One attempt failed and another is scheduled (the delivery stays `pending`). */
  'webhook_delivery.attempt_failed',
  /** The last attempt failed, or the endpoint is gone (the delivery is `failed`, left for resend). */
  'webhook_delivery.failed',
  /** An admin asked for a new delivery of the same event. */
  'webhook_delivery.resent',
  'webhook_endpoint.created',
  'webhook_endpoint.deleted',
] as const;

export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

export type AuditResourceType = 'webhook_delivery' | 'webhook_endpoint';

/** Plain values only: an audit event never holds a secret, a URL's query or a response body. */
export type AuditDetails = Record<string, string | number | boolean | null>;

export interface AuditEvent {
  id: string;
  type: AuditEventType;
  /** The partner it concerns; every event recorded today has one. */
  partnerId: string;
  resourceType: AuditResourceType;
  resourceId: string;
  details: AuditDetails;
  createdAt: string;
}
