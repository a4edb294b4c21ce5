/**
 * Stripe's two API keys, as the processor sandbox authenticates them. The secret key comes in the
 * `Authorization: Bearer` header and may make every call. The publishable key comes in that header or, as
 * Stripe.js sends it, in the `key` parameter (form body of a POST, query of a GET); what it may do is
 * `publishable.ts`. Idempotency keys are scoped per API key, so a browser's request never
 * replays a server's stored answer.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { invalidRequest } from './errors';

/** Who made a request, and the scope its idempotency keys live in. */
export interface Caller {
  kind: 'secret' | 'publishable';
  scope: string;
}

/** A key known by its SHA-256 digest, compared in constant time. */
class KnownKey {
  private readonly digest: Buffer;

  constructor(key: string) {
    this.digest = digestOf(key);
  }

  /** The idempotency scope: the digest in hex (the secret key's scope is what state files saved before keep). */
  get scope(): string {
    return this.digest.toString('hex');
  }

  matches(key: string): boolean {
    return timingSafeEqual(digestOf(key), this.digest);
  }
}

export class ApiKeys {
  private readonly secret: KnownKey;
  private readonly publishable: KnownKey;

  constructor(secretKey: string, publishableKey: string) {
    this.secret = new KnownKey(secretKey);
    this.publishable = new KnownKey(publishableKey);
  }

  /**
   * The caller of a request, from its `Authorization` header or, without one, the `key` parameter (read only
   * then, and only as the publishable key: a secret key does not travel in a URL or a browser's form). Throws
   * Stripe's 401 for a missing or unknown key.
   */
  authenticate(authorization: string | undefined, keyParameter: () => string | undefined): Caller {
    if (authorization === undefined || authorization.trim() === '') {
      const key = keyParameter();
      if (key === undefined) throw noApiKey();
      if (this.publishable.matches(key)) return { kind: 'publishable', scope: this.publishable.scope };
      throw invalidApiKey(key);
    }
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (bearer === null) {
      throw invalidRequest("Invalid Authorization header: use Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY').", { status: 401 });
    }
    const key = bearer[1] ?? '';
    if (this.secret.matches(key)) return { kind: 'secret', scope: this.secret.scope };
    if (this.publishable.matches(key)) return { kind: 'publishable', scope: this.publishable.scope };
    throw invalidApiKey(key);
  }
}

function noApiKey() {
  return invalidRequest(
    "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'). See https://stripe.com/docs/api#authentication for details, or we can help at https://support.stripe.com/.",
    { status: 401 },
  );
}

function invalidApiKey(key: string) {
  return invalidRequest(`Invalid API Key provided: ${redact(key)}`, { status: 401 });
}

/** `sk_test_abcdefgh1234` -> `sk_test_********1234`, as Stripe shows a key it refuses. */
function redact(key: string): string {
  if (key.length <= 12) return '*'.repeat(key.length);
  const prefix = /^[a-z]{2,4}_(?:test_|live_)?/.exec(key)?.[0] ?? '';
  return `${prefix}${'*'.repeat(key.length - prefix.length - 4)}${key.slice(-4)}`;
}

function digestOf(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Compares two secrets in constant time (of their digests: the lengths may differ). */
export function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(digestOf(given), digestOf(expected));
}
