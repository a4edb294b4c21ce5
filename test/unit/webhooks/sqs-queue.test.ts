/**
 * The SQS delivery queue adapter refuses what SQS would refuse before sending (a delay outside 0-900 whole
 * seconds) and says which setting is missing when no queue is configured, without a request either way.
 */
import { describe, expect, it } from '@jest/globals';
import { SQSClient } from '@aws-sdk/client-sqs';
import { ConfigError } from '../../../lib/config';
import { sqsDeliveryQueue } from '../../../lib/webhooks/sqs-queue';

/** A client that records what it is asked to send and never reaches a network. */
function recordingClient() {
  const sent: unknown[] = [];
  const client = new SQSClient({ region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  client.send = (async (command: { input: unknown }) => {
    sent.push(command.input);
    return {};
  }) as unknown as SQSClient['send'];
  return { client, sent };
}

describe('the SQS delivery queue adapter', () => {
  it('sends the message as JSON with its delay to the configured queue, its partner as the message group (the fair queue’s tenant)', async () => {
    const { client, sent } = recordingClient();

    await sqsDeliveryQueue(client, 'https://sqs.eu-west-1.amazonaws.com/123456789012/partner-webhooks').send({ deliveryId: 'dlv_1', partnerId: 'ptn_1' }, 4);

    expect(sent).toEqual([
      { QueueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/partner-webhooks', MessageBody: '{"deliveryId":"dlv_1"}', DelaySeconds: 4, MessageGroupId: 'ptn_1' },
    ]);
  });

  it.each([-1, 901, 1.5])('refuses a delay of %p seconds without sending', async (delaySeconds) => {
    const { client, sent } = recordingClient();

    await expect(sqsDeliveryQueue(client, 'http://127.0.0.1:1/000000000000/q').send({ deliveryId: 'dlv_1', partnerId: 'ptn_1' }, delaySeconds)).rejects.toThrow(RangeError);
    expect(sent).toEqual([]);
  });

  it('names WEBHOOK_QUEUE_URL when no queue is configured', async () => {
    const { client, sent } = recordingClient();

    await expect(sqsDeliveryQueue(client, undefined).send({ deliveryId: 'dlv_1', partnerId: 'ptn_1' }, 0)).rejects.toThrow(ConfigError);
    await expect(sqsDeliveryQueue(client, undefined).send({ deliveryId: 'dlv_1', partnerId: 'ptn_1' }, 0)).rejects.toThrow(/WEBHOOK_QUEUE_URL/);
    expect(sent).toEqual([]);
  });
});
