/**
 * The key that seals paging cursors (decisions.md §9: a cursor is authenticated by the service). In AWS it is
 * the stateful stack's generated Secrets Manager secret, whose ARN (`CURSOR_SECRET_ARN`) only the list functions
 * get; it is read with Powertools Parameters on the first page and cached for the life of the container.
 * Locally it is a 256-bit key file under `LOCAL_DATA_DIR`, created on first use.
 */
import { join } from 'node:path';
import { getSecret } from '@aws-lambda-powertools/parameters/secrets';
import { config, ConfigError } from '../config';
import { loadOrCreateKey } from './local-key';

/** Long enough that a warm container reads the secret once; the key is never rotated under live cursors. */
const SECRET_CACHE_SECONDS = 24 * 60 * 60;

let localKey: Buffer | undefined;

/** The HMAC key for cursors of this process. */
export async function cursorKey(): Promise<Buffer> {
  if (config.CURSOR_SECRET_ARN !== undefined) {
    return Buffer.from(await getSecret(config.CURSOR_SECRET_ARN, { maxAge: SECRET_CACHE_SECONDS, throwOnMissing: true }));
  }
  // In AWS a function without the ARN is not a list function: it has no business paging.
  if (config.SVC_RUNTIME === 'aws') throw new ConfigError('CURSOR_SECRET_ARN is not set: this function may not page lists');
  localKey ??= loadOrCreateKey(join(config.LOCAL_DATA_DIR, 'cursor-seal.key'));
  return localKey;
}
