/**
 * The DynamoDB clients of this process, created once. Locally they point at DynamoDB Local with fixed
 * credentials (so the SDK never probes for real ones); in AWS they use the function's role.
 */
import {
  DynamoDBClient,
  ProvisionedThroughputExceededException,
  RequestLimitExceeded,
  ThrottlingException,
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
 * Whether an error is a dependency that is down or shedding load, which a retry a moment later may get past:
 * the table throttling (by its SDK exception classes), or a connection refused, reset, never opened or timed out.
 */
export function isDependencyUnavailable(error: unknown): boolean {
  if (error instanceof ProvisionedThroughputExceededException || error instanceof RequestLimitExceeded || error instanceof ThrottlingException) return true;
  if (!(error instanceof Error)) return false;
  const { code } = error as NodeJS.ErrnoException;
  // The SDK's HTTP handler has no error class: a connection not opened within `connectionTimeout` (or a request
  // past `requestTimeout`) is an Error named `TimeoutError`, the first without any errno code.
  return (code !== undefined && UNREACHABLE_CODES.has(code)) || error.name === 'TimeoutError';
}
