/**
 * Identifiers: a prefix naming the entity, then random lowercase base32 (Crockford alphabet: no i, l, o, u),
 * so ids are unguessable, URL-safe and recognisable in logs. 24 characters carry 120 bits of randomness.
 */
import { createHash, randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** `length` base32 characters, one from each of the first `length` bytes (their low 5 bits). */
function base32(bytes: Uint8Array, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[(bytes[i] ?? 0) & 31];
  return out;
}

export const randomBase32 = (length = 24): string => base32(randomBytes(length), length);

/**
 * The `svc_tx_id` of a payment attempt, derived from its idempotency scope (decisions.md §4: the partner it acts
 * for, the route, the `idempotency-key`, the SHA-256 of the body, and the key record's random `nonce`), so that
 * every try of one attempt (a retry after a crash, a timeout or a released key) names the same transaction and
 * the same processor intent without a reservation write, and a different body under the same key names another.
 * The nonce keeps the id unguessable (nothing a request contains computes it) and makes the same key and body,
 * sent again after the record's 24 hours, a new attempt. 120 bits of a SHA-256: no two attempts meet.
 */
export function svcTxIdOf(scope: { owner: string; endpoint: string; idempotencyKey: string; fingerprint: string; nonce: string }): string {
  const parts = [scope.nonce, scope.owner, scope.endpoint, scope.idempotencyKey, scope.fingerprint];
  const digest = createHash('sha256').update(parts.join('\n')).digest();
  return `svc_tx_${base32(digest, 24)}`;
}

/** Whether `value` has the form of a partner id (`ptr_` + 24 base32 characters): anything else names no partner. */
export const isPartnerId = (value: unknown): value is string => typeof value === 'string' && /^ptr_[0-9a-hjkmnp-tv-z]{24}$/.test(value);

export const newId = {
  partner: () => `ptr_${randomBase32()}`,
  client: () => `cli_${randomBase32()}`,
  apiKey: () => `key_${randomBase32()}`,
  /** The internal record id of a transaction (spec: Transaction.id). */
  transactionRecord: () => `txn_${randomBase32()}`,
  /** The transaction identifier partners keep (decisions.md §5: `svc_tx_` + 24 base32 characters). */
  svcTx: () => `svc_tx_${randomBase32()}`,
  webhookEndpoint: () => `whe_${randomBase32()}`,
  /** A partner event: one per transaction move, shared by every delivery and resend of it. */
  partnerEvent: () => `evt_${randomBase32()}`,
  webhookDelivery: () => `dlv_${randomBase32()}`,
  auditEvent: () => `aud_${randomBase32()}`,
  /** An admin's settlement run, as its audit event names it (a run is no stored record of its own). */
  settlementRun: () => `run_${randomBase32()}`,
} as const;
