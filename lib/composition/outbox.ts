/** The partner webhook delivery queue: SQS in AWS, the local runtime's queue (through its SQS front) locally. */
import * as outbox from '../store/outbox';
import type { OutboxDeps } from '../use-cases/webhook-outbox';
import { deliveryQueue } from '../webhooks/sqs-queue';

export { deliveryQueue };
export const outboxDeps: OutboxDeps = { outbox, deliveryQueue };
