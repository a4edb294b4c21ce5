/**
 * Envelope encryption of secrets at rest (HMAC secrets, webhook endpoint secrets): each secret is encrypted
 * with its own AES-256-GCM data key, and only the data key's encrypted form is stored next to it. In AWS the
 * data key comes from KMS (GenerateDataKey / Decrypt); locally a key file under `.data/` plays KMS's part.
 * The `purpose` is bound to the ciphertext (GCM additional data and KMS encryption context), so a secret sealed
 * for one use cannot be opened as another.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { SealedSecret } from '../domain/sealed-secret';

/** Wraps and unwraps data keys: KMS in AWS, a local key file locally. */
export interface KeyEncryptionKey {
  id: string;
  generateDataKey(purpose: string): Promise<{ plaintext: Buffer; encrypted: Buffer }>;
  decryptDataKey(encrypted: Buffer, purpose: string): Promise<Buffer>;
}

/** Any purpose string (the service's own are `SECRET_PURPOSE`): so it implements the `SecretSealer` port. */
export interface SecretBox {
  seal(plaintext: string, purpose: string): Promise<SealedSecret>;
  open(sealed: SealedSecret, purpose: string): Promise<string>;
}

/** AES-256-GCM with a fresh 96-bit IV. */
export function aesGcmEncrypt(key: Buffer, plaintext: Buffer, aad: string) {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { iv, tag: cipher.getAuthTag(), ct };
}

export function aesGcmDecrypt(key: Buffer, parts: { iv: Buffer; tag: Buffer; ct: Buffer }, aad: string): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, parts.iv);
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(parts.tag);
  return Buffer.concat([decipher.update(parts.ct), decipher.final()]);
}

const DATA_KEY_CACHE_SIZE = 1000;

export function createSecretBox(kek: KeyEncryptionKey): SecretBox {
  /**
   * Decrypted data keys, by encrypted form: each API request checks an HMAC, and without this every request
   * would cost a KMS Decrypt. Bounded; lives as long as the Lambda container.
   */
  const dataKeys = new Map<string, Buffer>();
  return {
    async seal(plaintext, purpose) {
      const dataKey = await kek.generateDataKey(purpose);
      const { iv, tag, ct } = aesGcmEncrypt(dataKey.plaintext, Buffer.from(plaintext, 'utf8'), purpose);
      dataKey.plaintext.fill(0);
      return { v: 1, kek: kek.id, edk: dataKey.encrypted.toString('base64'), iv: iv.toString('base64'), tag: tag.toString('base64'), ct: ct.toString('base64') };
    },
    async open(sealed, purpose) {
      const cacheKey = `${purpose}:${sealed.edk}`;
      let dataKey = dataKeys.get(cacheKey);
      if (dataKey === undefined) {
        dataKey = await kek.decryptDataKey(Buffer.from(sealed.edk, 'base64'), purpose);
        if (dataKeys.size >= DATA_KEY_CACHE_SIZE) dataKeys.delete(dataKeys.keys().next().value as string);
        dataKeys.set(cacheKey, dataKey);
      }
      const parts = { iv: Buffer.from(sealed.iv, 'base64'), tag: Buffer.from(sealed.tag, 'base64'), ct: Buffer.from(sealed.ct, 'base64') };
      return aesGcmDecrypt(dataKey, parts, purpose).toString('utf8');
    },
  };
}
