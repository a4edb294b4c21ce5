/**
 * The idempotency record's shapes (decisions.md §4), as the HTTP chain, the use cases that fold their answer into
 * their own write, and the store that keeps the records all speak of them. Types only: the rules of claiming,
 * completing and releasing a key are the store's conditional writes (`lib/store/idempotency.ts`).
 */
import type { IdempotencyScope } from './caller';

export interface StoredResponse {
  statusCode: number;
  /** The JSON body as sent. */
  body: string;
}

export type ExistingRecord =
  | { status: 'in_progress'; fingerprint: string; lockExpiresAt: number }
  | { status: 'completed'; fingerprint: string; response: StoredResponse };

export interface ClaimRequest extends Omit<IdempotencyScope, 'nonce'> {
  lockToken: string;
  /** How long the lease runs: as long as the claiming request can still run (the HTTP chain's choice). */
  lockMs: number;
  nowMs: number;
}

export type Claim = { claimed: true; nonce: string } | { claimed: false; existing: ExistingRecord };

export type LeaseKey = Pick<ClaimRequest, 'owner' | 'endpoint' | 'idempotencyKey' | 'lockToken'>;

/**
 * A request's outcome stored as its key's replay in the same write as the work itself (a transaction created):
 * one write where there were two. The store sets `committed` once that write succeeds; until then (or if it never
 * does: the work was already there, a retry's case) the chain completes the key itself.
 */
export interface FoldedCompletion {
  lease: LeaseKey;
  response: StoredResponse;
  committed: boolean;
}
