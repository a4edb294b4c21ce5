/**
 * Audit events: append-only items (`AUDIT#<id>` / `AUDIT`), listed per partner (gsi5, over its shards) and
 * platform-wide (gsi6, over its shards), newest first (docs/data-model.md, sharded lists). Written as one `Put` inside the transaction of the change they
 * record, or alone for a request recorded before it runs (an admin's settlement run); never updated, never expired.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { AuditDetails, AuditEvent, AuditEventType, AuditResourceType } from '../domain/audit';
import { documentClient, tableName } from './dynamo';
import { AUDIT_LIST_SHARDS, keys } from './keys';
import { type Page, queryShardedPage, shardedSources } from './paging';

const toAuditEvent = (item: Record<string, unknown>): AuditEvent => ({
  id: item.id as string,
  type: item.type as AuditEventType,
  partnerId: (item.partnerId as string | null | undefined) ?? null,
  resourceType: item.resourceType as AuditResourceType,
  resourceId: item.resourceId as string,
  details: (item.details as AuditDetails | undefined) ?? {},
  createdAt: item.createdAt as string,
});

/** The `Put` of a new audit event inside a TransactWriteItems (its id is new: created once). */
export const putAuditEvent = (event: AuditEvent) => ({
  Put: {
    TableName: tableName,
    Item: {
      ...keys.auditEvent(event.id),
      ...keys.auditEventIndex(event.partnerId ?? undefined, event.id, event.createdAt),
      entity: 'auditEvent',
      ...event,
    },
    ConditionExpression: 'attribute_not_exists(pk)',
  },
});

/** Records an event on its own: what it records is a request about to run, not a write of its own. */
export async function recordAuditEvent(event: AuditEvent): Promise<void> {
  await documentClient.send(new PutCommand(putAuditEvent(event).Put));
}

/** Audit events of one partner or of all, newest first, optionally of one `type`. */
export function listAuditEvents(query: {
  partnerId?: string | undefined;
  type?: AuditEventType | undefined;
  limit: number;
  cursor?: string | undefined;
}): Promise<Page<AuditEvent>> {
  const { partnerId } = query;
  return queryShardedPage({
    list: partnerId === undefined ? 'audit-events' : `audit-events/${partnerId}`,
    sources:
      partnerId === undefined
        ? shardedSources('gsi6', AUDIT_LIST_SHARDS.platform, keys.platformAuditShard, { index: 'gsi2', partition: keys.allAuditEvents })
        : shardedSources('gsi5', AUDIT_LIST_SHARDS.partner, (shard) => keys.partnerAuditShard(partnerId, shard), { index: 'gsi1', partition: keys.auditEventsOf(partnerId) }),
    limit: query.limit,
    cursor: query.cursor,
    filter: query.type === undefined ? undefined : { expression: '#type = :type', names: { '#type': 'type' }, values: { ':type': query.type } },
    toItem: toAuditEvent,
  });
}
