/**
 * Partner credentials: API keys (stored only as SHA-256) and HMAC secrets (stored encrypted, because the
 * service must recompute signatures), and the request signature check.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export type KeyScope = 'partner' | 'platform';

/** Recognisable prefixes, so a leaked key is easy to spot (and to scan for) and its scope is visible. */
const API_KEY_PREFIX: Record<KeyScope, string> = { partner: 'svc_partner_', platform: 'svc_platform_' };
const HMAC_SECRET_PREFIX = 'svc_hmac_';
const SECRET_BYTES = 32;

const randomToken = () => randomBytes(SECRET_BYTES).toString('base64url');

export const generateApiKey = (scope: KeyScope) => `${API_KEY_PREFIX[scope]}${randomToken()}`;
export const generateHmacSecret = () => `${HMAC_SECRET_PREFIX}${randomToken()}`;

/** The only form in which an API key is stored or looked up. */
export const hashApiKey = (apiKey: string) => createHash('sha256').update(apiKey, 'utf8').digest('hex');

/** HMAC-SHA256 of the exact raw body, lowercase hex: what a partner sends in `x-svc-hmac`. */
export const signBody = (secret: string, rawBody: string) =>
  createHmac('sha256', secret).update(rawBody, 'utf8').digest('hex');

/** Constant-time comparison of a received signature with the expected one. */
export function signatureMatches(secret: string, rawBody: string, received: string): boolean {
  if (!/^[0-9a-fA-F]{64}$/.test(received)) return false;
  const expected = Buffer.from(signBody(secret, rawBody), 'hex');
  return timingSafeEqual(expected, Buffer.from(received, 'hex'));
}
