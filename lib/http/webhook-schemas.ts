/** Request schemas of the admin webhook routes: endpoints, deliveries, audit events (decisions.md §2, §9). */
import * as z from 'zod';
import { AUDIT_EVENT_TYPES } from '../domain/audit';
import { DELIVERY_STATUSES, PARTNER_EVENTS } from '../domain/webhooks';
import { PartnerParams } from './partner-schemas';
import { PageQuery, text } from './schemas';

export const WebhookEndpointParams = PartnerParams.extend({ id: z.string().min(1).max(64) });

/** The URL's own rules (https, public addresses) are the use case's: they depend on configuration and DNS. */
export const CreateWebhookEndpointBody = z.strictObject({
  name: text(1, 100),
  url: z.string().trim().min(1).max(2048),
  events: z
    .array(z.enum(PARTNER_EVENTS))
    .min(1, 'At least one event is required')
    .refine((events) => new Set(events).size === events.length, 'Each event may be listed once'),
});

export const DeliveryParams = z.object({ id: z.string().min(1).max(64) });

export const DeliveriesQuery = PageQuery.extend({ status: z.enum(DELIVERY_STATUSES).optional() });

export const AuditEventsQuery = PageQuery.extend({
  partner_id: z.string().min(1).max(64).optional(),
  type: z.enum(AUDIT_EVENT_TYPES).optional(),
});
