/**
 * Signing outbound partner webhooks (interface-spec.md Events; decisions.md §8). Every request carries two
 * signatures over the same exact body, so a partner can verify with a few lines of its own or with any
 * Standard Webhooks library (docs/webhooks.md shows both):
 *
 * - `X-Svc-Signature`: lowercase hex HMAC-SHA256 of the body, keyed by the whole secret string (`whsec_…`),
 *   with `X-Svc-Event-Id` and `X-Svc-Timestamp` (unix seconds) beside it;
 * - `webhook-id` (the event id), `webhook-timestamp` (unix seconds) and `webhook-signature:
 *   v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, keyed by the base64-decoded part after `whsec_`.
 *
 * The event id is the same on every attempt and resend (partners deduplicate by it); the timestamp is the
 * attempt's own, so a receiver's replay window (Standard Webhooks: 5 minutes) holds for retries too.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { signBody } from '../auth/credentials';

const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;

/** A new endpoint secret: `whsec_` + base64 of 32 random bytes (the Standard Webhooks form). */
export const generateWebhookSecret = () => `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;

/** The Standard Webhooks key: the bytes the base64 after `whsec_` stands for. */
function standardKey(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('A webhook secret starts with whsec_');
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
}

/**
 * `X-Svc-Signature`: lowercase hex HMAC-SHA256 of the exact body, keyed by the whole secret string: the same
 * scheme partners sign their requests with (`x-svc-hmac`), so one function makes both.
 */
export const svcSignature = signBody;

/** `webhook-signature`: `v1,` + base64 HMAC-SHA256 of `<id>.<timestamp>.<body>` keyed by the decoded secret. */
export const standardSignature = (secret: string, eventId: string, timestamp: number, body: string) =>
  `v1,${createHmac('sha256', standardKey(secret)).update(`${eventId}.${timestamp}.${body}`, 'utf8').digest('base64')}`;

export interface SignedWebhook {
  eventId: string;
  body: string;
  /** Unix seconds of this attempt. */
  timestamp: number;
}

/** The headers of one webhook request: content type and both signatures with their id and timestamp. */
export function webhookHeaders(secret: string, { eventId, body, timestamp }: SignedWebhook): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'X-Svc-Signature': svcSignature(secret, body),
    'X-Svc-Event-Id': eventId,
    'X-Svc-Timestamp': String(timestamp),
    'webhook-id': eventId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': standardSignature(secret, eventId, timestamp, body),
  };
}
