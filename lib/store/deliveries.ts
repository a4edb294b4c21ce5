/**
 * Partner webhook deliveries (decisions.md §2, §8): one item per (partner event, endpoint), listed per partner
 * (gsi1), and in the outbox (gsi2 `OUTBOX`, sparse) while pending: see `keys.outboxIndex`.
 */
import type { DeliveryStatus, PartnerEvent, WebhookDelivery } from '../domain/webhooks';
import { tableName } from './dynamo';
import { keys } from './keys';

/** How long after its creation a pending delivery that no message has picked up is relayed again. */
export const OUTBOX_GRACE_MS = 30_000;

export const toDelivery = (item: Record<string, unknown>): WebhookDelivery => ({
  id: item.id as string,
  eventId: item.eventId as string,
  endpointId: item.endpointId as string,
  partnerId: item.partnerId as string,
  event: item.event as PartnerEvent,
  svcTxId: item.svcTxId as string,
  payload: item.payload as string,
  status: item.status as DeliveryStatus,
  attempts: item.attempts as number,
  lastHttpStatus: (item.lastHttpStatus as number | null | undefined) ?? null,
  lastError: (item.lastError as string | null | undefined) ?? null,
  createdAt: item.createdAt as string,
  updatedAt: item.updatedAt as string,
});

/** A new delivery's item: listed under its partner, and in the outbox until it is finished. */
export const deliveryItem = (delivery: WebhookDelivery) => ({
  ...keys.webhookDelivery(delivery.id),
  ...keys.webhookDeliveryIndex(delivery.partnerId, delivery.id, delivery.createdAt),
  ...(delivery.status === 'pending'
    ? keys.outboxIndex(delivery.id, new Date(Date.parse(delivery.createdAt) + OUTBOX_GRACE_MS).toISOString())
    : {}),
  entity: 'webhookDelivery',
  ...delivery,
});

/** The `Put` of a new delivery inside a TransactWriteItems (created once: its id is new). */
export const putNewDelivery = (delivery: WebhookDelivery) => ({
  Put: { TableName: tableName, Item: deliveryItem(delivery), ConditionExpression: 'attribute_not_exists(pk)' },
});

