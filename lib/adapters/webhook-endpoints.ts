/** Wiring for registering partner webhook endpoints: the URL policy and the system's DNS resolver. */
import type { WebhookEndpointDeps } from '../use-cases/webhook-endpoints';
import { systemResolver } from '../webhooks/url-safety';
import { webhookUrlPolicy } from './webhook-url-policy';

export const webhookEndpointDeps: WebhookEndpointDeps = { urlPolicy: webhookUrlPolicy, resolve: systemResolver };
