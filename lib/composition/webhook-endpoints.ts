/**
 * Wiring for partner webhook endpoints and the audit log: the URL policy, the system's DNS resolver, the secret box
 * that seals new endpoint secrets, the table.
 */
import { secretBox } from '../secrets';
import * as auditEvents from '../store/audit-events';
import * as partners from '../store/partners';
import * as endpoints from '../store/webhook-endpoints';
import type { WebhookEndpointDeps } from '../use-cases/webhook-endpoints';
import { systemResolver } from '../webhooks/url-safety';
import { webhookUrlPolicy } from './webhook-url-policy';

export const webhookEndpointDeps: WebhookEndpointDeps = {
  urlPolicy: webhookUrlPolicy,
  resolve: systemResolver,
  secrets: secretBox,
  endpoints,
  partners,
  auditEvents,
};
