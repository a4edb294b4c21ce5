/** Partner webhook deliveries as the processor webhook writes them (pending, never attempted), for tests to seed. */
import { randomUUID } from 'node:crypto';
import { newId } from '../../lib/domain/ids';
import type { WebhookDelivery } from '../../lib/domain/webhooks';
import { keys } from '../../lib/store/keys';

/** A fresh `svc_tx_…` id (the shape the service mints). */
export const newSvcTxId = () => `svc_tx_${randomUUID().replace(/-/g, '').slice(0, 24)}`;

/** A pending `transaction_succeeded` delivery of `partnerId`'s to `endpointId`, carrying `payload`. */
export function pendingDelivery(fields: Pick<WebhookDelivery, 'partnerId' | 'endpointId' | 'svcTxId' | 'payload'> & { eventId?: string }): WebhookDelivery {
  const now = new Date().toISOString();
  return {
    id: newId.webhookDelivery(),
    eventId: fields.eventId ?? newId.partnerEvent(),
    event: 'transaction_succeeded',
    status: 'pending',
    attempts: 0,
    lastHttpStatus: null,
    lastError: null,
    createdAt: now,
    updatedAt: now,
    ...fields,
  };
}

/**
 * A new delivery's item (`deliveryItem`) as the service wrote it before the outbox had shards: its outbox entry in
 * gsi2's one partition `OUTBOX` (the same sort key), none in gsi7.
 */
export function legacyOutboxItem(item: Record<string, unknown>): Record<string, unknown> {
  const { gsi7pk: _shard, gsi7sk, ...rest } = item;
  if (typeof gsi7sk !== 'string') throw new Error('not a pending delivery: it has no outbox entry');
  return { ...rest, gsi2pk: keys.legacyOutbox, gsi2sk: gsi7sk };
}
