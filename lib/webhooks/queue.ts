/**
 * The partner-webhook delivery queue, as the use cases see it. In AWS an SQS queue with a dead-letter queue;
 * locally the runtime's queue with SQS's semantics (decisions.md §1). A message names a delivery only: the
 * delivery's state lives in the table, so a duplicate or late message changes nothing.
 */
/** SQS's longest message delay, in seconds: the queue's range is 0 to this. */
export const MAX_DELAY_SECONDS = 900;

export interface DeliveryMessage {
  deliveryId: string;
  /** The delivery's partner: the message's group (`MessageGroupId`), its tenant in the fair queue (decisions.md §8). */
  partnerId: string;
  /**
   * On a message that defers a delivery on its endpoint's breaker: what the consumer knew of it then, so the next
   * look can defer it again without reading it (the delivery's item stays the truth for every attempt).
   */
  waiting?: WaitingDelivery;
}

export interface WaitingDelivery {
  endpointId: string;
  createdAt: string;
  /** Epoch ms: its outbox key, before which the sweep does not send it again. */
  relayAfter: number;
}

export interface DeliveryQueue {
  /** Enqueues `message`, visible to the consumer after `delaySeconds` (0 to {@link MAX_DELAY_SECONDS}, SQS's range). */
  send(message: DeliveryMessage, delaySeconds: number): Promise<void>;
}
