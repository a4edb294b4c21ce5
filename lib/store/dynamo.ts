/**
 * The DynamoDB clients of this process, created once. Locally they point at DynamoDB Local with fixed
 * credentials (so the SDK never probes for real ones); in AWS they use the function's role.
 */
import {
  DynamoDBClient,
  ProvisionedThroughputExceededException,
  RequestLimitExceeded,
  ResourceNotFoundException,
  ThrottlingException,
  TransactionCanceledException,
  TransactionConflictException,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '../config';
import { traced } from '../observability';

/**
 * Every call is bounded: a DynamoDB that stops answering (locally, a dead DynamoDB Local whose port something
 * else holds) fails the call instead of holding a request, a queue consumer or the service's stop forever.
 * DynamoDB answers in milliseconds; 5 s per attempt only cuts off what is already lost.
 */
const requestHandler = { connectionTimeout: 2_000, requestTimeout: 5_000, throwOnRequestTimeout: true };

export const dynamoClient = traced(new DynamoDBClient(
  config.DYNAMODB_ENDPOINT === undefined
    ? { region: config.AWS_REGION, requestHandler }
    : {
        region: config.AWS_REGION,
        requestHandler,
        endpoint: config.DYNAMODB_ENDPOINT,
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      },
));

export const documentClient = DynamoDBDocumentClient.from(dynamoClient, {
  marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
});

export const tableName = config.TABLE_NAME;

/** Network failures reaching a dependency (the table, KMS, the queue): the connection or the answer never came. */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * Whether a transaction was cancelled only because other writes held its items at that moment (DynamoDB's
 * TransactionConflict), none of its own conditions failing: the same transaction a moment later may succeed.
 */
export function isConflictOnly(error: unknown): boolean {
  if (!(error instanceof TransactionCanceledException)) return false;
  const codes = (error.CancellationReasons ?? []).map((reason) => reason.Code);
  return codes.includes('TransactionConflict') && !codes.includes('ConditionalCheckFailed');
}

/** Thrown by {@link batchGetAll} when the table kept leaving keys unprocessed (it sheds load): a retry may get through. */
export class KeysLeftUnprocessed extends Error {
  override readonly name = 'KeysLeftUnprocessed';
}

/**
 * Whether an error is a dependency that is down, shedding load, busy or missing, which a retry a moment later may
 * get past (the HTTP chain answers it 503 SERVICE_UNAVAILABLE with `Retry-After`, wired in
 * `lib/composition/http-route.ts`): the table throttling (by its SDK exception classes) or leaving keys unprocessed,
 * a write that met a transaction in progress on its item (or a transaction that met other writes, with no
 * condition of its own failing) after the quick retries, a connection refused, reset, never opened or timed out,
 * or a table that does not exist (ResourceNotFoundException: a DynamoDB Local restarted in memory, before its
 * table is back, or a table deleted), which is the service's dependency missing, not the caller's mistake.
 */
export function isDependencyUnavailable(error: unknown): boolean {
  if (error instanceof ResourceNotFoundException) return true;
  if (error instanceof ProvisionedThroughputExceededException || error instanceof RequestLimitExceeded || error instanceof ThrottlingException) return true;
  if (error instanceof TransactionConflictException || error instanceof KeysLeftUnprocessed || isConflictOnly(error)) return true;
  if (!(error instanceof Error)) return false;
  const { code } = error as NodeJS.ErrnoException;
  // The SDK's HTTP handler has no error class: a connection not opened within `connectionTimeout` (or a request
  // past `requestTimeout`) is an Error named `TimeoutError`, the first without any errno code.
  return (code !== undefined && UNREACHABLE_CODES.has(code)) || error.name === 'TimeoutError';
}
