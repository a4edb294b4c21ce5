/**
 * The outbox stream relay: a DynamoDB Streams consumer (in AWS an event source mapping on the table's stream,
 * filtered to new pending deliveries; locally infra/local/delivery/stream-relay.ts polls DynamoDB Local's stream and
 * calls this same handler). Each new pending delivery is enqueued at once; a record whose enqueue fails is
 * reported by sequence number, so the stream retries from it (Powertools' batch processor, partial failures).
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { outboxDeps } from '../lib/composition/outbox';
import { relayNewDelivery, type OutboxDeps } from '../lib/use-cases/webhook-outbox';

/** Only a new item can be a delivery not yet relayed: the consumer's and the sweep's updates are MODIFYs. */
const newImageOf = (record: DynamoDBRecord) =>
  record.eventName === 'INSERT' && record.dynamodb?.NewImage !== undefined
    ? unmarshall(record.dynamodb.NewImage as Record<string, AttributeValue>)
    : undefined;

/** The handler over given adapters (tests inject a failing queue); `handler` uses the process's own. */
export const createHandler = (deps: Pick<OutboxDeps, 'deliveryQueue'>) => {
  const processor = new BatchProcessor(EventType.DynamoDBStreams);
  return (event: DynamoDBStreamEvent, context: Context): Promise<DynamoDBBatchResponse> =>
    processPartialResponse(event, (record: DynamoDBRecord) => relayNewDelivery(deps, newImageOf(record)), processor, {
      context,
      // A batch where every record failed is answered like any other (each sequence number listed), not thrown.
      throwOnFullBatchFailure: false,
    });
};

export const handler = createHandler(outboxDeps);
