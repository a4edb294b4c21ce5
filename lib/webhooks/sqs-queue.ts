/**
 * The delivery queue adapter: SQS `SendMessage` through the AWS SDK, the one adapter used in AWS and locally.
 * Locally `WEBHOOK_QUEUE_URL` points at the runtime's queue front (infra/local/delivery/sqs-front.ts), which
 * speaks SQS's JSON protocol, so the same client code (and the SDK's MD5 check of the body) runs both ways.
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { config, ConfigError } from '../config';
import { traced } from '../observability';
import { type DeliveryQueue, MAX_DELAY_SECONDS, type QueueMessage } from './queue';

/**
 * The client of this process. Locally its endpoint is the queue URL's origin, with fixed credentials (so the
 * SDK never probes for real ones); in AWS the SDK resolves the regional endpoint and uses the function's role.
 */
export const sqsClient = traced(new SQSClient(
  config.SVC_RUNTIME === 'local' && config.WEBHOOK_QUEUE_URL !== undefined
    ? {
        region: config.AWS_REGION,
        endpoint: new URL(config.WEBHOOK_QUEUE_URL).origin,
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }
    : { region: config.AWS_REGION },
));

/** A {@link DeliveryQueue} that sends to `queueUrl` with `client`; a message's body is its JSON. */
export function sqsDeliveryQueue(client: SQSClient, queueUrl: string | undefined): DeliveryQueue {
  return {
    async send(message: QueueMessage, delaySeconds: number): Promise<void> {
      if (queueUrl === undefined) {
        throw new ConfigError('WEBHOOK_QUEUE_URL: required to enqueue partner webhook deliveries');
      }
      if (!Number.isInteger(delaySeconds) || delaySeconds < 0 || delaySeconds > MAX_DELAY_SECONDS) {
        throw new RangeError(`delaySeconds must be a whole number 0-${MAX_DELAY_SECONDS}, got ${delaySeconds}`);
      }
      await client.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          // The partner travels as the group id, not in the body.
          MessageBody: JSON.stringify('deliveryId' in message ? { deliveryId: message.deliveryId } : { wake: message.wakeEndpointId }),
          DelaySeconds: delaySeconds,
          // A standard queue with a group id on every message is an SQS fair queue: the partner is the tenant.
          MessageGroupId: message.partnerId,
        }),
      );
    },
  };
}

/** The delivery queue of this process (`WEBHOOK_QUEUE_URL`). */
export const deliveryQueue: DeliveryQueue = sqsDeliveryQueue(sqsClient, config.WEBHOOK_QUEUE_URL);
