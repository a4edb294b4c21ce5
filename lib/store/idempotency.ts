/**
 * Idempotency records (decisions.md §4), one per (owner, endpoint, idempotency-key), kept 24 hours.
 * A request claims its key with a conditional write; the claim is a lease (`lockToken`, `lockExpiresAt`), so a
 * request that died mid-flight does not block its key forever. Completing or releasing needs the lease.
 *
 * Each record carries a `nonce`: random, made by the claim that creates the record, and kept by every later claim
 * of it (a retry taking over a dead request's lease, a retry after a release) for the record's 24 hours. A
 * transaction-creating attempt derives its `svc_tx_id` from it (`svcTxIdOf`), so every try of one attempt names
 * the same transaction and processor intent, no one can compute an id from what a request contains, and the same
 * key and body sent again after the record expired name a new transaction.
 */
import { TransactionConflictException } from '@aws-sdk/client-dynamodb';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { errors } from '../domain/errors';
import { randomBase32 } from '../domain/ids';
import type { Claim, ClaimRequest, ExistingRecord, FoldedCompletion, LeaseKey, StoredResponse } from '../domain/idempotency';
import type { SettleOptions } from '../http/ports';
import { failedItem, writeIfCondition } from './conditions';
import { documentClient, tableName } from './dynamo';
import { keys } from './keys';

/** How long a finished response is replayed. */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;

/**
 * Claims the key for this request, or returns the record that holds it. The claim succeeds when no record
 * exists, the record was released (the request before failed in a way a retry may not), the lease of an
 * in-flight request with the same body has run out (it died: this retry takes over), or the record has expired
 * (TTL deletion lags: a new record, with a new nonce). A different body never takes a live key over: it gets 422.
 * A claim that meets the holder's own write in progress (DynamoDB's TransactionConflict: the holder is storing
 * its answer with its transaction) is 409 IDEMPOTENCY_KEY_IN_USE, as any claim of a held key.
 */
export async function claimIdempotencyKey(request: ClaimRequest): Promise<Claim> {
  const claim = claimUpdate(request, randomBase32());
  try {
    const { Attributes } = await documentClient.send(new UpdateCommand(claim));
    return { claimed: true, nonce: Attributes?.nonce as string };
  } catch (error) {
    if (error instanceof TransactionConflictException) throw errors.idempotencyKeyInUse(1);
    const item = failedItem(error);
    if (item === undefined) throw error;
    const values = claim.ExpressionAttributeValues;
    if ((item.expiresAt as number) < values[':nowSeconds']) return claimExpired(claim.Key, values);
    return { claimed: false, existing: toExisting(item) };
  }
}

/**
 * The claim's UpdateItem (exported for the bench's DB bound, which sends the very same call): the lease set, the
 * nonce kept or made, on a record that is absent, released, or held by a dead request with the same body; never
 * on an expired one (it keeps an old nonce: `claimExpired` replaces it instead).
 */
export function claimUpdate(request: ClaimRequest, nonce: string) {
  const nowSeconds = Math.floor(request.nowMs / 1000);
  return {
    TableName: tableName,
    Key: keys.idempotency(request.owner, request.endpoint, request.idempotencyKey),
    UpdateExpression:
      'SET entity = :entity, #status = :inProgress, fingerprint = :fingerprint, lockToken = :lockToken, ' +
      'lockExpiresAt = :lockExpiresAt, createdAt = :createdAt, expiresAt = :expiresAt, nonce = if_not_exists(nonce, :nonce)',
    ConditionExpression:
      'attribute_not_exists(pk) OR (expiresAt >= :nowSeconds AND (#status = :released OR ' +
      '(#status = :inProgress AND lockExpiresAt < :nowMs AND fingerprint = :fingerprint)))',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: {
      ':entity': 'idempotency',
      ':inProgress': 'in_progress',
      ':fingerprint': request.fingerprint,
      ':lockToken': request.lockToken,
      ':lockExpiresAt': request.nowMs + request.lockMs,
      ':createdAt': new Date(request.nowMs).toISOString(),
      ':expiresAt': nowSeconds + IDEMPOTENCY_TTL_SECONDS,
      ':nonce': nonce,
      ':nowSeconds': nowSeconds,
      ':nowMs': request.nowMs,
      ':released': 'released',
    },
    ReturnValues: 'UPDATED_NEW' as const,
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
  };
}

type ClaimValues = ReturnType<typeof claimUpdate>['ExpressionAttributeValues'];

/** An expired record (kept past its 24 hours until TTL deletes it) replaced by a new one: a new nonce. */
async function claimExpired(key: object, values: ClaimValues): Promise<Claim> {
  const item = {
    ...key,
    entity: values[':entity'],
    status: values[':inProgress'],
    fingerprint: values[':fingerprint'],
    lockToken: values[':lockToken'],
    lockExpiresAt: values[':lockExpiresAt'],
    createdAt: values[':createdAt'],
    expiresAt: values[':expiresAt'],
    nonce: values[':nonce'],
  };
  try {
    await documentClient.send(
      new PutCommand({
        TableName: tableName,
        Item: item,
        ConditionExpression: 'attribute_not_exists(pk) OR expiresAt < :nowSeconds',
        ExpressionAttributeValues: { ':nowSeconds': values[':nowSeconds'] },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { claimed: true, nonce: item.nonce };
  } catch (error) {
    if (error instanceof TransactionConflictException) throw errors.idempotencyKeyInUse(1);
    const existing = failedItem(error);
    if (existing === undefined) throw error;
    // Another request renewed the record first.
    return { claimed: false, existing: toExisting(existing) };
  }
}

function toExisting(item: Record<string, unknown>): ExistingRecord {
  const fingerprint = item.fingerprint as string;
  if (item.status === 'completed') {
    return { status: 'completed', fingerprint, response: { statusCode: item.responseStatus as number, body: item.responseBody as string } };
  }
  return { status: 'in_progress', fingerprint, lockExpiresAt: item.lockExpiresAt as number };
}

/** The TransactWriteItems item that completes `completion`'s key: as {@link completeIdempotencyKey}, on the lease it holds. */
export function completionItem({ lease, response }: FoldedCompletion): object {
  return { Update: completionUpdate(lease, response) };
}

/** The UpdateItem that stores `response` on the lease's record (exported for the bench's DB bound, which sends it too). */
export function completionUpdate(lease: LeaseKey, response: StoredResponse) {
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

/** Stores the response for replay; a no-op (returns false) if the lease was lost to another request. */
export function completeIdempotencyKey(lease: LeaseKey, response: StoredResponse, options: SettleOptions = {}): Promise<boolean> {
  return writeIfCondition(documentClient.send(new UpdateCommand(completionUpdate(lease, response)), options));
}

/**
 * Frees the key (the request failed validation or with a 5xx): the next attempt runs afresh, under the same
 * nonce (a retry of a checkout that failed after the processor call finds the same intent).
 */
export async function releaseIdempotencyKey(lease: LeaseKey, options: SettleOptions = {}): Promise<void> {
  await writeIfCondition(
    documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.idempotency(lease.owner, lease.endpoint, lease.idempotencyKey),
        UpdateExpression: 'SET #status = :released REMOVE lockToken, lockExpiresAt',
        ConditionExpression: 'lockToken = :lockToken AND #status = :inProgress',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':lockToken': lease.lockToken, ':inProgress': 'in_progress', ':released': 'released' },
      }),
      options,
    ),
  );
}
