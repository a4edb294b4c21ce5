import { config } from '../config';
import { SECRET_PURPOSE } from '../domain/sealed-secret';
import { secretBox } from '../secrets';
import * as deliveries from '../store/deliveries';
import * as webhookEndpoints from '../store/webhook-endpoints';
import type { WebhookDeliveryDeps } from '../use-cases/webhook-deliveries';
import { createHttpSender, WEBHOOK_TIMEOUT_MS } from '../webhooks/http-sender';
import { breakerSettings } from '../domain/endpoint-breaker';
import { cachedEndpoints } from '../store/endpoint-cache';
import { deliveryQueue } from '../webhooks/sqs-queue';
import { webhookUrlPolicy } from './webhook-url-policy';

/** The delivery consumer's adapters: real HTTP (10 s timeout, URL re-checked, addresses pinned), the queue for retries. */
export const webhookDeliveryDeps: WebhookDeliveryDeps = {
  deliveries,
  ...cachedEndpoints(webhookEndpoints, webhookEndpoints),
  breakerSettings: breakerSettings(WEBHOOK_TIMEOUT_MS),
  openSecret: (sealed) => secretBox.open(sealed, SECRET_PURPOSE.webhook),
  queue: deliveryQueue,
  send: createHttpSender({ policy: webhookUrlPolicy }),
  retryBaseMs: config.WEBHOOK_RETRY_BASE_MS,
  now: Date.now,
  random: Math.random,
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};
