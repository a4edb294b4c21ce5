/**
 * The partner-webhook delivery queue, as the use cases see it. In AWS an SQS queue with a dead-letter queue;
 * locally the runtime's queue with SQS's semantics (decisions.md §1). A message names a delivery only: the
 * delivery's state lives in the table, so a duplicate or late message changes nothing.
 */
export interface DeliveryMessage {
  deliveryId: string;
}

export interface DeliveryQueue {
  /** Enqueues `message`, visible to the consumer after `delaySeconds` (0-900, SQS's range). */
  send(message: DeliveryMessage, delaySeconds: number): Promise<void>;
}
