/**
 * What the chain's access steps and error mapper need from outside `lib/http`: the API keys, partners, rate
 * windows and idempotency records they read and write, and which errors mean a dependency is down. The chain
 * knows these interfaces only; the composition point (`lib/composition/http-route.ts`) wires the DynamoDB adapters
 * behind them, so the chain has no idea which store, or which SDK's exceptions, it is talking to.
 */
import type { StoredApiKey } from '../auth/api-keys';
import type { Claim, ClaimRequest, LeaseKey, SettleOptions, StoredResponse } from '../domain/idempotency';
import type { KnownPayee, Partner, PayeeIds } from '../domain/partner';

export interface ApiKeyLookup {
  /** The key stored under this hash; `undefined` when there is none (revoked or never issued). */
  findApiKey(keyHash: string): Promise<StoredApiKey | undefined>;
  /**
   * The key and, in the same strongly consistent read, the payee a payment body names: one round trip where there
   * were three. Nothing of the payee is used unless the key may act for its partner.
   */
  findApiKeyAndPayee(keyHash: string, named: PayeeIds): Promise<{ apiKey: StoredApiKey | undefined; payee: KnownPayee }>;
}

export interface PartnerLookup {
  getPartner(partnerId: string): Promise<Partner | undefined>;
}

/** Fixed one-minute windows per owner, counted atomically across every instance of the service. */
export interface RequestCounter {
  /** The time the limiter counts by, in ms since the epoch (tests pin it inside a window). */
  now(): number;
  /** Adds one request to the owner's window and answers the window's count including it. */
  countRequest(owner: string, windowStartMinute: number): Promise<number>;
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
  partners: PartnerLookup;
  rateLimit: RequestCounter;
  idempotency: IdempotencyRecords;
  isDependencyUnavailable: DependencyFailureCheck;
}
