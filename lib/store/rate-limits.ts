/**
 * Fixed one-minute windows per partner, counted atomically in DynamoDB (so the limit holds across every
 * Lambda instance), on one counter item or, for a high limit, several (`lib/domain/rate-limit.ts`). Each counter
 * expires shortly after its window ends.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from './dynamo';
import { keys } from './keys';

/**
 * The time the rate limiter counts by. Tests set `now` to pin a request inside a window, so they assert exact
 * outcomes instead of waiting for a minute boundary.
 */
export const rateLimitClock = { now: (): number => Date.now() };

/** Adds one request to counter `counter` of the owner's window and returns that counter's count including it. */
export async function countRequest(owner: string, windowStartMinute: number, counter: number): Promise<number> {
  const { Attributes } = await documentClient.send(
    new UpdateCommand({
      TableName: tableName,
      Key: keys.rateWindow(owner, windowStartMinute, counter),
      UpdateExpression: 'ADD requestCount :one SET expiresAt = if_not_exists(expiresAt, :expiresAt), entity = :entity',
      ExpressionAttributeValues: { ':one': 1, ':expiresAt': (windowStartMinute + 5) * 60, ':entity': 'rateWindow' },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return Number(Attributes?.requestCount ?? 0);
}
