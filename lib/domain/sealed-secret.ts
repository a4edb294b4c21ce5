/**
 * A secret as the service keeps it at rest (an API key's HMAC secret, a webhook endpoint's signing secret): sealed
 * by envelope encryption, so what the table holds can only be opened through the key-encryption key. Stores keep
 * and return it as it is; only the secret box (`lib/secrets`, behind the `SecretSealer` port) seals or opens it.
 */
export interface SealedSecret {
  v: 1;
  /** Which key-encryption key wrapped the data key: a KMS key id, or `local`. */
  kek: string;
  /** The data key, encrypted by the key-encryption key (base64). */
  edk: string;
  iv: string;
  tag: string;
  ct: string;
}

/**
 * What a secret is sealed for, bound to its ciphertext (GCM additional data, KMS encryption context): a secret
 * sealed for one use cannot be opened as another. The values are part of every stored secret: never change one.
 */
export const SECRET_PURPOSE = { hmac: 'api-key-hmac-secret', webhook: 'webhook-endpoint-secret' } as const;

export type SecretPurpose = (typeof SECRET_PURPOSE)[keyof typeof SECRET_PURPOSE];
