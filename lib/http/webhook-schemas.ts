/** Request schemas of the admin webhook routes: endpoints, deliveries, audit events (decisions.md §2, §9). */
import * as z from 'zod';
import { AUDIT_EVENT_TYPES } from '../domain/audit';
import { DELIVERY_STATUSES, PARTNER_EVENTS } from '../domain/webhooks';
import { PartnerParams } from './partner-schemas';
import { PageQuery, text } from './schemas';

export const WebhookEndpointParams = PartnerParams.extend({
  id: z.string().min(1).max(64).meta({ description: "The endpoint's id (`whe_…`)", example: 'whe_ejskdsd7mpskw6xhrxtd57j8' }),
});

/** The URL's own rules (https, public addresses) are the use case's: they depend on configuration and DNS. */
export const CreateWebhookEndpointBody = z.strictObject({
  name: text(1, 100).meta({ description: 'A name for people (1-100 characters)', example: 'Order service (production)' }),
  url: z
    .string()
    .trim()
    .min(1)
    .max(2048)
    .meta({
      description:
        'Where deliveries are POSTed (at most 2048 characters, surrounding whitespace trimmed): an absolute `https://` URL without user name or ' +
        'password, whose host resolves to public addresses only (plain `http://` and private addresses only where `ALLOW_INSECURE_WEBHOOK_URLS` is set). ' +
        'Otherwise 400 VALIDATION_ERROR on `url`',
      example: 'https://api.example.com/webhooks/payments',
    }),
  events: z
    .array(z.enum(PARTNER_EVENTS))
    .min(1, 'At least one event is required')
    .refine((events) => new Set(events).size === events.length, 'Each event may be listed once')
    .meta({ description: 'The events sent to this endpoint: one or more, each at most once', example: ['transaction_succeeded', 'transaction_failed'] }),
});

export const DeliveryParams = z.object({
  id: z.string().min(1).max(64).meta({ description: "The delivery's id (`dlv_…`)", example: 'dlv_ez34w9d4m3hnak589s634gc1' }),
});

export const DeliveriesQuery = PageQuery.extend({
  status: z
    .enum(DELIVERY_STATUSES)
    .optional()
    .meta({ description: 'Only deliveries in this state: `pending` (attempts left), `succeeded` (a 2xx answer) or `failed` (attempts used up, or endpoint deleted)', example: 'failed' }),
});

export const AuditEventsQuery = PageQuery.extend({
  partner_id: z.string().min(1).max(64).optional().meta({ description: 'Only the events of this partner', example: 'ptr_cc0g7fs3hpkca17rfvndrekn' }),
  type: z.enum(AUDIT_EVENT_TYPES).optional().meta({ description: 'Only events of this type', example: 'webhook_delivery.failed' }),
});
