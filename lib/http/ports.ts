/**
 * What the chain's access steps and error mapper need from outside `lib/http`: the API keys, partners, rate
 * windows and idempotency records they read and write, the secret box that opens a key's HMAC secret, and which
 * errors mean a dependency is down. The chain knows these interfaces only; the composition point
 * (`lib/composition/http-route.ts`) wires the DynamoDB adapters and the secret box behind them, so the chain has no
 * idea which store, which key service, or which SDK's exceptions, it is talking to.
 */
import type { StoredApiKey } from '../auth/api-keys';
import type { Claim, ClaimRequest, LeaseKey, StoredResponse } from '../domain/idempotency';
import type { KnownPayee, PayeeIds } from '../domain/partner';
import type { PartnerReader } from '../use-cases/ports/partner-readers';
import type { SecretSealer } from '../use-cases/ports/secret-sealer';

export interface ApiKeyLookup {
  /** The key stored under this hash; `undefined` when there is none (revoked or never issued). */
  findApiKey(keyHash: string): Promise<StoredApiKey | undefined>;
  /**
   * The key and, in the same strongly consistent read, the payee a payment body names: one round trip where there
   * were three. Nothing of the payee is used unless the key may act for its partner.
   */
  findApiKeyAndPayee(keyHash: string, named: PayeeIds): Promise<{ apiKey: StoredApiKey | undefined; payee: KnownPayee }>;
}

/** Fixed one-minute windows per owner, counted atomically across every instance of the service. */
export interface RequestCounter {
  /** The time the limiter counts by, in ms since the epoch (tests pin it inside a window). */
  now(): number;
  /** Adds one request to counter `counter` of the owner's window and answers that counter's count including it. */
  countRequest(owner: string, windowStartMinute: number, counter: number): Promise<number>;
}

/**
 * How long a write that settles a key may take (`abortSignal`: the function's time left, less the margin the chain
 * keeps to answer); unbounded without it.
 */
export interface SettleOptions {
  abortSignal?: AbortSignal;
}

/** The idempotency records (decisions.md §4): a request claims its key as a lease, then completes or releases it. */
export interface IdempotencyRecords {
  /** Claims the key for this request, or answers the record that holds it. */
  claim(request: ClaimRequest): Promise<Claim>;
  /** Stores the response for replay; `false` (nothing written) when the lease was lost to another request. */
  complete(lease: LeaseKey, response: StoredResponse, options?: SettleOptions): Promise<boolean>;
  /** Frees the key for the next attempt; nothing happens when the lease was lost. */
  release(lease: LeaseKey, options?: SettleOptions): Promise<void>;
}

/**
 * Whether an error that is no `ServiceError` means a dependency is down, shedding load or missing (answered 503
 * SERVICE_UNAVAILABLE with `Retry-After`) rather than a defect (500). The adapter that threw it knows its own
 * exceptions; the chain only asks.
 */
export type DependencyFailureCheck = (error: unknown) => boolean;

export interface HttpPorts {
  apiKeys: ApiKeyLookup;
  partners: PartnerReader;
  /** Opens the HMAC secret of the key a mutation is signed with; the chain never seals. */
  secrets: Pick<SecretSealer, 'open'>;
  rateLimit: RequestCounter;
  idempotency: IdempotencyRecords;
  isDependencyUnavailable: DependencyFailureCheck;
}
