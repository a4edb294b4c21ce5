/**
 * The local stand-in for KMS: a 256-bit key-encryption key in a file under the local data directory
 * (created on first use, readable only by its owner). Data keys are wrapped with it by AES-256-GCM.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { aesGcmDecrypt, aesGcmEncrypt, type KeyEncryptionKey } from './secret-box';

/**
 * A local 256-bit key kept in a file (base64), created on first use with owner-only permissions; concurrent
 * first uses (several processes) all end up with the one key that was written first. For local stand-ins of
 * keys that AWS keeps (this file's KMS key, the cursor-sealing key).
 */
export function loadOrCreateKey(path: string): Buffer {
  try {
    const key = Buffer.from(readFileSync(path, 'utf8').trim(), 'base64');
    if (key.length !== 32) throw new Error(`${path} does not hold a 256-bit key`);
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(dirname(path), { recursive: true });
  const key = randomBytes(32);
  try {
    writeFileSync(path, key.toString('base64'), { mode: 0o600, flag: 'wx' });
  } catch (error) {
    // Another process created it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return loadOrCreateKey(path);
    throw error;
  }
  chmodSync(path, 0o600);
  return key;
}

export function localKeyEncryptionKey(path: string): KeyEncryptionKey {
  let key: Buffer | undefined;
  const kek = () => (key ??= loadOrCreateKey(path));
  return {
    id: 'local',
    async generateDataKey(purpose) {
      const plaintext = randomBytes(32);
      const { iv, tag, ct } = aesGcmEncrypt(kek(), plaintext, purpose);
      return { plaintext, encrypted: Buffer.concat([iv, tag, ct]) };
    },
    async decryptDataKey(encrypted, purpose) {
      return aesGcmDecrypt(kek(), { iv: encrypted.subarray(0, 12), tag: encrypted.subarray(12, 28), ct: encrypted.subarray(28) }, purpose);
    },
  };
}
