/**
 * Stripe's idempotent requests, as the sandbox keeps them: a POST's `Idempotency-Key` (scoped to the API key,
 * secret or publishable) stores the first response the handler gave; the same key with the same endpoint and
 * parameters replays it, with other parameters or on another endpoint is an `idempotency_error`. Keys are kept
 * 24 hours.
 */
import { idempotencyError, invalidRequest } from './errors';

/** Stripe keeps idempotency keys for 24 hours. */
const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;
const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** The first response to a request under one key, and what the request was, to tell a retry from a reuse. */
export interface StoredResponse {
  /** The API key's scope (`Caller.scope`) and the idempotency key. */
  scope: string;
  /** `POST /v1/payment_intents` */
  endpoint: string;
  /** The request's parameters, canonical (`canonical` in form.ts). */
  fingerprint: string;
  status: number;
  body: string;
  requestId: string;
  /** Unix milliseconds. */
  storedAt: number;
}

/**
 * Refuses a key no client should send: an empty one would otherwise be one key shared by every request that
 * sends it, so unrelated requests would replay or refuse each other.
 */
export function checkIdempotencyKey(key: string): void {
  if (key === '') throw invalidRequest('Invalid idempotency key: it must not be empty.');
  if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw invalidRequest(`Invalid idempotency key: it must be at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters long.`);
  }
}

/** The stored responses, by the API key's scope and the idempotency key; saved and loaded with the state. */
export class IdempotencyKeys {
  /** By scope, oldest first (a key stored again moves to the end), so expired keys are at the front. */
  private readonly responses = new Map<string, StoredResponse>();

  constructor(saved: readonly StoredResponse[] = []) {
    for (const response of saved) this.store(response);
  }

  /**
   * The response to replay for a retry under `key`, or undefined when the key is new (or expired) and the
   * request is to run. Throws `idempotency_error` when the key was first used for another request.
   */
  replay(scope: string, key: string, endpoint: string, fingerprint: string): StoredResponse | undefined {
    const stored = this.responses.get(scope);
    if (stored === undefined || expired(stored)) return undefined;
    if (stored.endpoint !== endpoint) {
      throw idempotencyError(
        `Keys for idempotent requests can only be used for the same endpoint they were first used for ('${stored.endpoint}' vs '${endpoint}'). Try using a key other than '${key}' if you meant to execute a different request.`,
      );
    }
    if (stored.fingerprint !== fingerprint) {
      throw idempotencyError(
        `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
      );
    }
    return stored;
  }

  /** Keeps a handler's response under its key (refusals are never stored) and forgets expired keys. */
  store(response: StoredResponse): void {
    this.responses.delete(response.scope);
    this.responses.set(response.scope, response);
    for (const [scope, oldest] of this.responses) {
      if (!expired(oldest)) break;
      this.responses.delete(scope);
    }
  }

  /** The live keys, oldest first, for the state file. */
  save(): StoredResponse[] {
    return [...this.responses.values()].filter((response) => !expired(response));
  }
}

function expired(response: StoredResponse): boolean {
  return Date.now() - response.storedAt >= IDEMPOTENCY_KEY_TTL_MS;
}
