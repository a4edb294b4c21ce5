/**
 * Partner webhook endpoints (decisions.md §2): items under the partner (`PARTNER#<id>` /
 * `WEBHOOK_ENDPOINT#<id>`), listed by `begins_with(sk)`. The signing secret is stored sealed
 * (`lib/secrets`, purpose `webhook`) in `secret`, and never leaves the store except to sign a delivery.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { PartnerEvent, WebhookEndpoint } from '../domain/webhooks';
import { documentClient, tableName } from './dynamo';
import { keys } from './keys';

export const toWebhookEndpoint = (item: Record<string, unknown>): WebhookEndpoint => ({
  id: item.id as string,
  partnerId: item.partnerId as string,
  name: item.name as string,
  url: item.url as string,
  events: item.events as PartnerEvent[],
  createdAt: item.createdAt as string,
});

/** Every endpoint of a partner (a partner has a handful: one strongly consistent Query, paged through). */
export async function listWebhookEndpoints(partnerId: string): Promise<WebhookEndpoint[]> {
  const { pk, skPrefix } = keys.webhookEndpointPrefix(partnerId);
  const found: WebhookEndpoint[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await documentClient.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    found.push(...(page.Items ?? []).map(toWebhookEndpoint));
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  return found;
}
