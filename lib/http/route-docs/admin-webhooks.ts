/**
 * The API reference's "Admin: webhooks" section: partners' webhook endpoints, deliveries and the audit log
 * (`functions/admin-webhook-*`, `admin-audit-events-list`).
 */
import * as z from 'zod';
import { AuditEvent, CreatedWebhookEndpoint, pageOf, WebhookDelivery, WebhookEndpoint } from '../response-schemas';
import { prose, type RouteDoc } from '../route-doc';

export const createWebhookEndpointDoc: RouteDoc = {
  summary: 'Create a webhook endpoint',
  description: prose`
    Subscribes a partner URL to some events. The answer holds the signing \`secret\` (\`whsec_…\`), shown only here:
    each delivery is signed with it (\`X-Svc-Signature\`: lowercase hex HMAC-SHA256 of the exact body keyed by the whole
    secret; also Standard Webhooks \`webhook-signature\`). The URL must be \`https://\` and resolve to public addresses
    only (400 VALIDATION_ERROR on \`url\` otherwise). A partner has at most 20 endpoints.
  `,
  tag: 'Admin: webhooks',
  responses: {
    201: { description: 'The endpoint, with its secret (shown this once)', schema: CreatedWebhookEndpoint },
  },
  errors: ['PARTNER_NOT_FOUND', 'WEBHOOK_ENDPOINT_LIMIT_REACHED'],
  example: { name: 'Order service (production)', url: 'https://api.example.com/webhooks/payments', events: ['transaction_succeeded', 'transaction_failed'] },
};

/** `{ items }` only: the list is whole (at most 20), so it has no `next_cursor` and `pageOf` does not fit it. */
const WebhookEndpointList = z.strictObject({ items: z.array(WebhookEndpoint) }).meta({ id: 'WebhookEndpointList' });

export const listWebhookEndpointsDoc: RouteDoc = {
  summary: "List a partner's webhook endpoints",
  description: 'Every endpoint of the partner (at most 20), newest first, in one answer (no paging). Secrets are never shown again.',
  tag: 'Admin: webhooks',
  responses: {
    200: { description: "The partner's endpoints, without secrets", schema: WebhookEndpointList },
  },
  errors: ['PARTNER_NOT_FOUND'],
};

export const deleteWebhookEndpointDoc: RouteDoc = {
  summary: 'Delete a webhook endpoint',
  description: prose`
    Deletes the endpoint (recorded in the audit log). Its pending deliveries fail at their next attempt and can no
    longer be resent. An endpoint of another partner, or one already deleted, is 404.
  `,
  tag: 'Admin: webhooks',
  responses: {
    204: { description: 'Deleted' },
  },
  errors: ['WEBHOOK_ENDPOINT_NOT_FOUND'],
};

export const listWebhookDeliveriesDoc: RouteDoc = {
  summary: "List a partner's webhook deliveries",
  description: prose`
    One delivery per event and subscribed endpoint, attempted up to 3 times with exponential backoff: \`pending\` while
    attempts are left, \`succeeded\` on a 2xx answer, \`failed\` once they are used up or the endpoint is deleted (it
    can then be resent). Newest first, paged by \`limit\` (1-200, default 50) and \`cursor\` (the previous page's
    \`next_cursor\`, with the same filter); filter by \`status\`.
  `,
  tag: 'Admin: webhooks',
  responses: {
    200: { description: 'One page of deliveries, newest first', schema: pageOf(WebhookDelivery, 'WebhookDeliveryPage') },
  },
  errors: ['PARTNER_NOT_FOUND'],
};

export const resendWebhookDeliveryDoc: RouteDoc = {
  summary: 'Resend a webhook delivery',
  description: prose`
    Creates a new delivery (new id, \`pending\`, no attempts) of the same event to the same endpoint: same \`event_id\`,
    same body byte for byte, so the partner can deduplicate it. Any delivery may be resent, whatever its status; it is
    sent shortly after this answer. The endpoint must still exist (409 WEBHOOK_ENDPOINT_DELETED).
  `,
  tag: 'Admin: webhooks',
  responses: {
    202: { description: 'The new delivery, queued', schema: WebhookDelivery },
  },
  errors: ['WEBHOOK_DELIVERY_NOT_FOUND', 'WEBHOOK_ENDPOINT_DELETED'],
};

export const listAuditEventsDoc: RouteDoc = {
  summary: 'List audit events',
  description: prose`
    The append-only log of what happened to partner webhooks (endpoints created and deleted, delivery attempts that
    failed, deliveries that succeeded, failed or were resent) and of what admins did: partners created and updated, API
    keys issued and revoked, settlement runs and payouts started (\`details.admin\`: the admin token's subject; never a
    secret). Each event is written in the same transaction as the change it records (a settlement run: before it
    starts). Platform-wide keys' events have a null \`partner_id\`. Newest first, paged by \`limit\` (1-200, default 50)
    and \`cursor\` (the previous page's \`next_cursor\`, with the same filters); filter by \`partner_id\` and \`type\`.
  `,
  tag: 'Admin: webhooks',
  responses: {
    200: { description: 'One page of audit events, newest first', schema: pageOf(AuditEvent, 'AuditEventPage') },
  },
  errors: [],
};
