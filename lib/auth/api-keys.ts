/** An API key as the service keeps it, and what may be shown or needed of it (decisions.md §2). */
import type { SealedSecret } from '../domain/sealed-secret';
import type { KeyScope } from './credentials';

export interface StoredApiKey {
  keyId: string;
  keyHash: string;
  scope: KeyScope;
  /** Present on partner-scoped keys only. */
  partnerId: string | undefined;
  hmacSecret: SealedSecret;
  createdAt: string;
}

/** What may be shown of a key once issued: never its hash or its secret. */
export type ApiKeySummary = Pick<StoredApiKey, 'keyId' | 'scope' | 'partnerId' | 'createdAt'>;

/** A key as its revocation needs it: the hash its item is found by, and what its audit event names. */
export type ApiKeyRef = Pick<StoredApiKey, 'keyId' | 'keyHash' | 'scope' | 'partnerId'>;
