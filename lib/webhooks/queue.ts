/**
 * The partner-webhook delivery queue, as the use cases see it. In AWS an SQS queue with a dead-letter queue;
 * locally the runtime's queue with SQS's semantics (decisions.md §1). A message names a delivery, or an endpoint
 * whose parked deliveries to wake: their state lives in the table, so a duplicate or late message changes nothing.
 */
/** SQS's longest message delay, in seconds: the queue's range is 0 to this. */
export const MAX_DELAY_SECONDS = 900;

/** Look at delivery `deliveryId`: attempt it if it is due and its endpoint can take it. */
export interface DeliveryMessage {
  deliveryId: string;
  /** The delivery's partner: the message's group (`MessageGroupId`), its tenant in the fair queue (decisions.md §8). */
  partnerId: string;
}

/** Wake the deliveries parked on endpoint `wakeEndpointId` that it can take now (lib/use-cases/webhook-deliveries.ts). */
export interface WakeMessage {
  wakeEndpointId: string;
  /** The endpoint's partner: the message's group, as for a delivery. */
  partnerId: string;
}

export type QueueMessage = DeliveryMessage | WakeMessage;

export interface DeliveryQueue {
  /** Enqueues `message`, visible to the consumer after `delaySeconds` (0 to {@link MAX_DELAY_SECONDS}, SQS's range). */
  send(message: QueueMessage, delaySeconds: number): Promise<void>;
}
