/**
 * Audit events (decisions.md §2 `GET /admin/audit-events`): an append-only record of what happened to partner
 * webhooks and of the settlement an admin started, written in the same DynamoDB transaction as the change it
 * records, so the log and the state never disagree (an admin's settlement run, many transactions, is recorded
 * before it starts: the request, not its outcome). Pure: no I/O.
 */
import { newId } from './ids';

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
  /** An admin ran settlement (`POST /admin/settlements/run`), recorded before the run: its scope, not its batches. */
  'settlement_run.requested',
  /** An admin's pay took the batch for a payout attempt (`POST /admin/settlements/{id}/pay`), recorded with that claim. */
  'settlement_batch.payout_started',
] as const;

export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

export type AuditResourceType = 'webhook_delivery' | 'webhook_endpoint' | 'settlement_run' | 'settlement_batch';

/** Plain values only: an audit event never holds a secret, a URL's query or a response body. */
export type AuditDetails = Record<string, string | number | boolean | null>;

export interface AuditEvent {
  id: string;
  type: AuditEventType;
  /** The partner it concerns; null for what concerns every partner (a settlement run without `partner_id`). */
  partnerId: string | null;
  resourceType: AuditResourceType;
  resourceId: string;
  details: AuditDetails;
  createdAt: string;
}

/** A new audit event, at `at`, about what `fields` name. */
export const newAuditEvent = (fields: Omit<AuditEvent, 'id' | 'createdAt'>, at: Date): AuditEvent => ({
  id: newId.auditEvent(),
  ...fields,
  createdAt: at.toISOString(),
});
