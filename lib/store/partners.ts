/** Partner records. */
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { errors } from '../domain/errors';
import type { Partner } from '../domain/partner';
import { isConditionFailure } from './conditions';
import { documentClient, tableName } from './dynamo';
import { keys } from './keys';
import { type Page, queryPage } from './paging';

export const toPartner = (item: Record<string, unknown>): Partner => ({
  partnerId: item.partnerId as string,
  name: item.name as string,
  status: item.status as Partner['status'],
  kycStatus: item.kycStatus as Partner['kycStatus'],
  serviceFeePercentage: item.serviceFeePercentage as number,
  rateLimitPerMinute: (item.rateLimitPerMinute as number | null | undefined) ?? null,
  branding: (item.branding as Partner['branding'] | undefined) ?? null,
  createdAt: item.createdAt as string,
  updatedAt: item.updatedAt as string,
});

export async function createPartner(partner: Partner): Promise<Partner> {
  await documentClient.send(
    new PutCommand({
      TableName: tableName,
      Item: { ...keys.partner(partner.partnerId), ...keys.partnerIndex(partner.partnerId, partner.createdAt), entity: 'partner', ...partner },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
  return partner;
}

/** Strongly consistent: a suspension takes effect on the very next request. */
export async function getPartner(partnerId: string): Promise<Partner | undefined> {
  const { Item } = await documentClient.send(
    new GetCommand({ TableName: tableName, Key: keys.partner(partnerId), ConsistentRead: true }),
  );
  return Item === undefined ? undefined : toPartner(Item);
}

export type PartnerChanges = Partial<
  Pick<Partner, 'name' | 'status' | 'kycStatus' | 'serviceFeePercentage' | 'rateLimitPerMinute' | 'branding'>
>;

/** Applies the given fields (only those), conditional on the partner existing. */
export async function updatePartner(partnerId: string, changes: PartnerChanges, now: string): Promise<Partner> {
  const fields = Object.entries({ ...changes, updatedAt: now }).filter(([, value]) => value !== undefined);
  try {
    const { Attributes } = await documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.partner(partnerId),
        UpdateExpression: `SET ${fields.map((_, i) => `#f${i} = :v${i}`).join(', ')}`,
        ExpressionAttributeNames: Object.fromEntries(fields.map(([name], i) => [`#f${i}`, name])),
        ExpressionAttributeValues: Object.fromEntries(fields.map(([, value], i) => [`:v${i}`, value])),
        ConditionExpression: 'attribute_exists(pk)',
        ReturnValues: 'ALL_NEW',
      }),
    );
    return toPartner(Attributes ?? {});
  } catch (error) {
    if (isConditionFailure(error)) throw errors.partnerNotFound();
    throw error;
  }
}

export function listPartners(page: { limit: number; cursor?: string | undefined }): Promise<Page<Partner>> {
  return queryPage({ index: 'gsi1', partition: keys.allPartners, ...page, toItem: toPartner });
}

/**
 * Every partner's id, oldest first, read page by page: for work that goes over all partners (a platform-wide
 * settlement run), not for a caller's list (no cursor to hand out, so none is sealed).
 */
export async function* allPartnerIds(): AsyncGenerator<string> {
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await documentClient.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.allPartners },
        ProjectionExpression: 'partnerId',
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of page.Items ?? []) yield item.partnerId as string;
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
}
