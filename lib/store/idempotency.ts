/**
 * Idempotency records (decisions.md §4), one per (owner, endpoint, idempotency-key), kept 24 hours.
 * A request claims its key with a conditional put; the claim is a lease (`lockToken`, `lockExpiresAt`), so a
 * request that died mid-flight does not block its key forever. Completing or releasing needs the lease.
 */
import type { IdempotencyScope } from '../domain/caller';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { failedItem, writeIfCondition } from './conditions';
import { documentClient, tableName } from './dynamo';
import { keys } from './keys';

/** How long a finished response is replayed. */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;

export interface StoredResponse {
  statusCode: number;
  /** The JSON body as sent. */
  body: string;
}

export type ExistingRecord =
  | { status: 'in_progress'; fingerprint: string; lockExpiresAt: number }
  | { status: 'completed'; fingerprint: string; response: StoredResponse };

export interface ClaimRequest extends IdempotencyScope {
  lockToken: string;
  /** How long the lease runs: as long as the claiming request can still run (the HTTP chain's choice). */
  lockMs: number;
  nowMs: number;
}

/**
 * Claims the key for this request, or returns the record that holds it. The claim succeeds when no record
 * exists, the record has expired (TTL deletion lags), or the lease of an in-flight request with the same body
 * has run out (it died: this retry takes over). A different body never takes a key over: it gets 422.
 */
export async function claimIdempotencyKey(request: ClaimRequest): Promise<{ claimed: true } | { claimed: false; existing: ExistingRecord }> {
  const nowSeconds = Math.floor(request.nowMs / 1000);
  try {
    await documentClient.send(
      new PutCommand({
        TableName: tableName,
        Item: {
          ...keys.idempotency(request.owner, request.endpoint, request.idempotencyKey),
          entity: 'idempotency',
          status: 'in_progress',
          fingerprint: request.fingerprint,
          lockToken: request.lockToken,
          lockExpiresAt: request.nowMs + request.lockMs,
          createdAt: new Date(request.nowMs).toISOString(),
          expiresAt: nowSeconds + IDEMPOTENCY_TTL_SECONDS,
        },
        ConditionExpression:
          'attribute_not_exists(pk) OR expiresAt < :nowSeconds OR (#status = :inProgress AND lockExpiresAt < :nowMs AND fingerprint = :fingerprint)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':nowSeconds': nowSeconds,
          ':nowMs': request.nowMs,
          ':inProgress': 'in_progress',
          ':fingerprint': request.fingerprint,
        },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { claimed: true };
  } catch (error) {
    const item = failedItem(error);
    if (item === undefined) throw error;
    return { claimed: false, existing: toExisting(item) };
  }
}

function toExisting(item: Record<string, unknown>): ExistingRecord {
  const fingerprint = item.fingerprint as string;
  if (item.status === 'completed') {
    return { status: 'completed', fingerprint, response: { statusCode: item.responseStatus as number, body: item.responseBody as string } };
  }
  return { status: 'in_progress', fingerprint, lockExpiresAt: item.lockExpiresAt as number };
}

export type LeaseKey = Pick<ClaimRequest, 'owner' | 'endpoint' | 'idempotencyKey' | 'lockToken'>;

/**
 * A request's outcome stored as its key's replay in the same TransactWriteItems as the work itself (a
 * transaction created): one write where there were two. The store sets `committed` once that write succeeds;
 * until then (or if it never does: the work was already there, a retry's case) the chain completes the key itself.
 */
export interface FoldedCompletion {
  lease: LeaseKey;
  response: StoredResponse;
  committed: boolean;
}

/** The TransactWriteItems item that completes `completion`'s key: as {@link completeIdempotencyKey}, on the lease it holds. */
export function completionItem({ lease, response }: FoldedCompletion): object {
  return { Update: completionUpdate(lease, response) };
}

function completionUpdate(lease: LeaseKey, response: StoredResponse) {
  return {
    TableName: tableName,
    Key: keys.idempotency(lease.owner, lease.endpoint, lease.idempotencyKey),
    UpdateExpression: 'SET #status = :completed, responseStatus = :statusCode, responseBody = :body REMOVE lockExpiresAt',
    ConditionExpression: 'lockToken = :lockToken',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: {
      ':completed': 'completed',
      ':statusCode': response.statusCode,
      ':body': response.body,
      ':lockToken': lease.lockToken,
    },
  };
}

/** How long a write that settles a key may take (`abortSignal`: the caller's time left); unbounded without it. */
export interface SettleOptions {
  abortSignal?: AbortSignal;
}

/** Stores the response for replay; a no-op (returns false) if the lease was lost to another request. */
export function completeIdempotencyKey(lease: LeaseKey, response: StoredResponse, options: SettleOptions = {}): Promise<boolean> {
  return writeIfCondition(documentClient.send(new UpdateCommand(completionUpdate(lease, response)), options));
}

/** Frees the key (the request failed validation or with a 5xx): the next attempt runs afresh. */
export async function releaseIdempotencyKey(lease: LeaseKey, options: SettleOptions = {}): Promise<void> {
  await writeIfCondition(
    documentClient.send(
      new DeleteCommand({
        TableName: tableName,
        Key: keys.idempotency(lease.owner, lease.endpoint, lease.idempotencyKey),
        ConditionExpression: 'lockToken = :lockToken AND #status = :inProgress',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':lockToken': lease.lockToken, ':inProgress': 'in_progress' },
      }),
      options,
    ),
  );
}
