/** KMS as the key-encryption key: GenerateDataKey to seal, Decrypt to open, with the purpose as context. */
import { DecryptCommand, GenerateDataKeyCommand, type KMSClient } from '@aws-sdk/client-kms';
import type { KeyEncryptionKey } from './secret-box';

export function kmsKeyEncryptionKey(client: KMSClient, keyId: string): KeyEncryptionKey {
  return {
    id: keyId,
    async generateDataKey(purpose) {
      const result = await client.send(
        new GenerateDataKeyCommand({ KeyId: keyId, KeySpec: 'AES_256', EncryptionContext: { purpose } }),
      );
      if (result.Plaintext === undefined || result.CiphertextBlob === undefined) throw new Error('KMS returned no data key');
      return { plaintext: Buffer.from(result.Plaintext), encrypted: Buffer.from(result.CiphertextBlob) };
    },
    async decryptDataKey(encrypted, purpose) {
      const result = await client.send(
        new DecryptCommand({ KeyId: keyId, CiphertextBlob: encrypted, EncryptionContext: { purpose } }),
      );
      if (result.Plaintext === undefined) throw new Error('KMS returned no plaintext');
      return Buffer.from(result.Plaintext);
    },
  };
}
