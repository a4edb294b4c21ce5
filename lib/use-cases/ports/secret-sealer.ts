/**
 * The secret box as its users see it: seal a new secret for one purpose, open a stored one for the same purpose.
 * The adapter (`lib/secrets`) seals by envelope encryption under KMS in AWS, under a local key file locally, and
 * keeps opened data keys for the life of the container; its users (the use cases that issue credentials, the
 * chain that checks HMAC signatures, the delivery consumer that signs webhooks) take it wired in `lib/composition`.
 */
import type { SealedSecret, SecretPurpose } from '../../domain/sealed-secret';

export interface SecretSealer {
  seal(plaintext: string, purpose: SecretPurpose): Promise<SealedSecret>;
  /** The plaintext; throws when `sealed` was not sealed for `purpose` (or not by this service's key). */
  open(sealed: SealedSecret, purpose: SecretPurpose): Promise<string>;
}
