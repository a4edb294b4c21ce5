import { config } from '../config';
import type { UrlPolicy } from '../webhooks/url-safety';

/** Where partner webhooks may go: https and public addresses only, unless ALLOW_INSECURE_WEBHOOK_URLS (decisions.md §8). */
export const webhookUrlPolicy: UrlPolicy = { allowInsecure: config.ALLOW_INSECURE_WEBHOOK_URLS };
