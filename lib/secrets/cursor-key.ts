/**
 * The key that seals paging cursors (decisions.md §9: a cursor is opaque and authenticated by the service). The
 * secret behind it is, in AWS, the stateful stack's generated Secrets Manager secret, whose ARN
 * (`CURSOR_SECRET_ARN`) only the list functions get; it is read with Powertools Parameters on the first page and
 * cached for the life of the container. Locally it is a 256-bit key file under `LOCAL_DATA_DIR`, created on first
 * use. Cursors are never sealed with the secret itself but with an AES-256 key derived from it by HKDF-SHA256
 * under a fixed label: the same secret gives the same key in every Lambda, and the secret's own form (a generated
 * string in AWS, random bytes locally) does not matter.
 */
import { hkdfSync } from 'node:crypto';
import { join } from 'node:path';
import { getSecret } from '@aws-lambda-powertools/parameters/secrets';
import { config, ConfigError } from '../config';
import { loadOrCreateKey } from './local-key';

/** Long enough that a warm container reads the secret once; the key is never rotated under live cursors. */
const SECRET_CACHE_SECONDS = 24 * 60 * 60;

/** HKDF's `info`: names what the derived key is for, so it can never double as a key for anything else. */
const CURSOR_KEY_LABEL = 'partner-payments/list-cursor/aes-256-gcm/v1';

let localSecret: Buffer | undefined;
/** The last derivation, so a warm container runs HKDF once per secret value, not once per page. */
let derived: { secret: Buffer; key: Buffer } | undefined;

const deriveCursorKey = (secret: Buffer): Buffer =>
  Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), CURSOR_KEY_LABEL, 32));

async function cursorSecret(): Promise<Buffer> {
  if (config.CURSOR_SECRET_ARN !== undefined) {
    return Buffer.from(await getSecret(config.CURSOR_SECRET_ARN, { maxAge: SECRET_CACHE_SECONDS, throwOnMissing: true }));
  }
  // In AWS a function without the ARN is not a list function: it has no business paging.
  if (config.SVC_RUNTIME === 'aws') throw new ConfigError('CURSOR_SECRET_ARN is not set: this function may not page lists');
  localSecret ??= loadOrCreateKey(join(config.LOCAL_DATA_DIR, 'cursor-seal.key'));
  return localSecret;
}

/** The AES-256-GCM key (32 bytes) that encrypts and authenticates this process's cursors. */
export async function cursorKey(): Promise<Buffer> {
  const secret = await cursorSecret();
  if (derived === undefined || !derived.secret.equals(secret)) derived = { secret, key: deriveCursorKey(secret) };
  return derived.key;
}
