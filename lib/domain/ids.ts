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

export const newId = {
  partner: () => `ptr_${randomBase32()}`,
  client: () => `cli_${randomBase32()}`,
  apiKey: () => `key_${randomBase32()}`,
} as const;
