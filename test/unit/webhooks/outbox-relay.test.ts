/**
 * The outbox stream relay's handler: only a new pending delivery is enqueued (due at once), and a record whose
 * enqueue fails is reported by its sequence number, so the stream retries it and nothing else.
 */
import { describe, expect, it } from '@jest/globals';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { Context, DynamoDBRecord } from 'aws-lambda';
import { createHandler } from '../../../functions/outbox-relay';
import { lambdaContext } from '../../../infra/local/lambda/adapter';
import { matches } from '../../../infra/local/delivery/stream-relay';
import { OUTBOX_RELAY } from '../../../infra/shared/webhook-delivery';
import { keys } from '../../../lib/store/keys';
import type { DeliveryMessage, DeliveryQueue } from '../../../lib/webhooks/queue';

const context: Context = lambdaContext('outbox-relay', 30_000);

function streamRecord(sequenceNumber: string, eventName: 'INSERT' | 'MODIFY' | 'REMOVE', image: Record<string, unknown>): DynamoDBRecord {
  return {
    eventID: `event-${sequenceNumber}`,
    eventName,
    eventSource: 'aws:dynamodb',
    eventVersion: '1.1',
    awsRegion: 'local',
    dynamodb: {
      SequenceNumber: sequenceNumber,
      Keys: marshall({ pk: image.pk, sk: image.sk }) as never,
      NewImage: marshall(image, { removeUndefinedValues: true }) as never,
      StreamViewType: 'NEW_IMAGE',
    },
    eventSourceARN: 'arn:aws:dynamodb:local:000000000000:table/partner-payments/stream/now',
  };
}

const delivery = (id: string, overrides: Record<string, unknown> = {}) => ({
  pk: `DELIVERY#${id}`,
  sk: 'DELIVERY',
  entity: 'webhookDelivery',
  id,
  partnerId: 'ptn_relay',
  status: 'pending',
  attempts: 0,
  ...keys.outboxIndex(id, '2030-01-01T00:02:00.000Z'),
  ...overrides,
});

function recordingQueue(failFor: Set<string> = new Set()) {
  const sent: Array<{ message: DeliveryMessage; delaySeconds: number }> = [];
  const queue: DeliveryQueue = {
    async send(message, delaySeconds) {
      if (!('deliveryId' in message)) throw new Error('the relay sends delivery messages only');
      if (failFor.has(message.deliveryId)) throw new Error('queue unavailable');
      sent.push({ message, delaySeconds });
    },
  };
  return { queue, sent };
}

describe('the outbox relay handler', () => {
  it('enqueues each new pending delivery, due at once, its partner as the message group, and nothing else on the stream', async () => {
    const { queue, sent } = recordingQueue();
    const handler = createHandler({ deliveryQueue: queue });

    const response = await handler(
      {
        Records: [
          streamRecord('100', 'INSERT', delivery('dlv_new1')),
          streamRecord('101', 'INSERT', { pk: 'TX#svc_tx_1', sk: 'TX', entity: 'transaction', status: 'pending' }),
          // The consumer's claim and the sweep's lease are updates of a delivery: never relayed again here
          streamRecord('102', 'MODIFY', delivery('dlv_claimed')),
          streamRecord('103', 'INSERT', delivery('dlv_done', { status: 'succeeded', attempts: 1 })),
          streamRecord('104', 'INSERT', delivery('dlv_new2')),
        ],
      },
      context,
    );

    expect(response).toEqual({ batchItemFailures: [] });
    expect(sent).toEqual([
      { message: { deliveryId: 'dlv_new1', partnerId: 'ptn_relay' }, delaySeconds: 0 },
      { message: { deliveryId: 'dlv_new2', partnerId: 'ptn_relay' }, delaySeconds: 0 },
    ]);
  });

  it('reports the record whose enqueue failed by its sequence number, and only it', async () => {
    const { queue, sent } = recordingQueue(new Set(['dlv_unlucky']));
    const handler = createHandler({ deliveryQueue: queue });

    const response = await handler(
      { Records: [streamRecord('200', 'INSERT', delivery('dlv_lucky')), streamRecord('201', 'INSERT', delivery('dlv_unlucky'))] },
      context,
    );

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: '201' }] });
    expect(sent.map((entry) => entry.message.deliveryId)).toEqual(['dlv_lucky']);
  });

  it('shares its filter with the event source: the pattern passes a new pending delivery and nothing else', () => {
    const pattern = OUTBOX_RELAY.filterPattern as unknown as Record<string, unknown>;

    expect(matches(pattern, streamRecord('1', 'INSERT', delivery('dlv_a')))).toBe(true);
    expect(matches(pattern, streamRecord('2', 'MODIFY', delivery('dlv_a')))).toBe(false);
    expect(matches(pattern, streamRecord('3', 'INSERT', delivery('dlv_a', { attempts: 1 })))).toBe(false);
    expect(matches(pattern, streamRecord('4', 'INSERT', delivery('dlv_a', { status: 'failed' })))).toBe(false);
    expect(matches(pattern, streamRecord('5', 'INSERT', { pk: 'TX#1', sk: 'TX', entity: 'transaction', status: 'pending', attempts: 0 }))).toBe(false);
  });
});
