/**
 * Identifiers: a prefix naming the entity, then random lowercase base32 (Crockford alphabet: no i, l, o, u),
 * so ids are unguessable, URL-safe and recognisable in logs. 24 characters carry 120 bits of randomness.
 */
import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export function randomBase32(length = 24): string {
  const bytes = randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[(bytes[i] ?? 0) & 31];
  return out;
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
} as const;
