/** Partner records. An admin's create and update write their audit event in the same transaction. */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { AuditEvent } from '../domain/audit';
import type { Partner, PartnerChanges, PartnerForUpdate, PartnerUpdate } from '../domain/partner';
import { putAuditEvent } from './audit-events';
import { cancelledItem, failedConditions } from './conditions';
import { documentClient, tableName } from './dynamo';
import { keys } from './keys';
import { type Page, queryPage } from './paging';
import { transactWrite } from './transact';

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

/** Writes a new partner (its id is new: created once) and its audit event, in one transaction. */
export async function createPartner(partner: Partner, audit: AuditEvent): Promise<Partner> {
  await transactWrite([
    {
      Put: {
        TableName: tableName,
        Item: { ...keys.partner(partner.partnerId), ...keys.partnerIndex(partner.partnerId, partner.createdAt), entity: 'partner', ...partner },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    putAuditEvent(audit),
  ]);
  return partner;
}

/** Strongly consistent: a suspension takes effect on the very next request. */
export async function getPartner(partnerId: string): Promise<Partner | undefined> {
  const { Item } = await documentClient.send(
    new GetCommand({ TableName: tableName, Key: keys.partner(partnerId), ConsistentRead: true }),
  );
  return Item === undefined ? undefined : toPartner(Item);
}


export async function getPartnerForUpdate(partnerId: string): Promise<PartnerForUpdate | undefined> {
  const { Item } = await documentClient.send(new GetCommand({ TableName: tableName, Key: keys.partner(partnerId), ConsistentRead: true }));
  return Item === undefined ? undefined : { partner: toPartner(Item), revision: (Item.revision as number | undefined) ?? 0 };
}



/**
 * Applies the given fields (only those) and writes the audit event, in one transaction conditional on the partner
 * being as it was read (its revision unchanged, and raised by this write): so the event's "before" values are
 * exactly what the update replaced, and the partner it answers is exactly what was written.
 */
export async function updatePartner(seen: PartnerForUpdate, changes: PartnerChanges, now: string, audit: AuditEvent): Promise<PartnerUpdate> {
  const fields = Object.entries({ ...changes, updatedAt: now, revision: seen.revision + 1 }).filter(([, value]) => value !== undefined);
  try {
    await transactWrite([
      {
        Update: {
          TableName: tableName,
          Key: keys.partner(seen.partner.partnerId),
          UpdateExpression: `SET ${fields.map((_, i) => `#f${i} = :v${i}`).join(', ')}`,
          ConditionExpression: seen.revision === 0 ? 'attribute_exists(pk) AND attribute_not_exists(revision)' : 'revision = :seen',
          ExpressionAttributeNames: Object.fromEntries(fields.map(([name], i) => [`#f${i}`, name])),
          ExpressionAttributeValues: {
            ...Object.fromEntries(fields.map(([, value], i) => [`:v${i}`, value])),
            ...(seen.revision === 0 ? {} : { ':seen': seen.revision }),
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      putAuditEvent(audit),
    ]);
    return 'updated';
  } catch (error) {
    if (!failedConditions(error).includes(0)) throw error;
    return cancelledItem(error, 0) === undefined ? 'gone' : 'changed';
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
