/**
 * The single table's shape, written once and used twice: by the CDK stateful stack (`infra/aws`) and by the
 * local runtime, which creates the same table in DynamoDB Local. docs/data-model.md explains every entity
 * and access pattern that lives in it.
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceNotFoundException,
  type StreamSpecification,
  type TableDescription,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';

export const PARTITION_KEY = 'pk';
export const SORT_KEY = 'sk';
/** Epoch seconds; DynamoDB's TTL deletes idempotency records, rate-limit counters and other short-lived items. */
export const TTL_ATTRIBUTE = 'expiresAt';

export interface IndexDefinition {
  indexName: string;
  partitionKey: string;
  sortKey: string;
}

/** Generic, overloaded GSIs (all string keys, all attributes projected); `keys.ts` decides what goes in them. */
export const GLOBAL_INDEXES: readonly IndexDefinition[] = [
  { indexName: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
  { indexName: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
  { indexName: 'gsi3', partitionKey: 'gsi3pk', sortKey: 'gsi3sk' },
];

/**
 * The table's stream: every change, with the item's new image. The outbox relay reads new pending deliveries
 * from it (functions/outbox-relay.ts; locally infra/local/stream-relay.ts polls DynamoDB Local's stream).
 */
export const STREAM_VIEW_TYPE = 'NEW_IMAGE' as const;
const streamSpecification: StreamSpecification = { StreamEnabled: true, StreamViewType: STREAM_VIEW_TYPE };

const stringAttribute = (name: string) => ({ AttributeName: name, AttributeType: 'S' as const });

/**
 * Creates the table (on-demand, with every GSI, TTL and the stream) unless it exists; resolves once it is
 * ACTIVE. A table that exists without the stream (made before the outbox relay) gets it.
 */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<'created' | 'existed'> {
  let existing: TableDescription | undefined;
  try {
    existing = (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
  if (existing !== undefined) {
    await ensureStream(client, tableName, existing.StreamSpecification);
    return 'existed';
  }
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        stringAttribute(PARTITION_KEY),
        stringAttribute(SORT_KEY),
        ...GLOBAL_INDEXES.flatMap((index) => [stringAttribute(index.partitionKey), stringAttribute(index.sortKey)]),
      ],
      KeySchema: [
        { AttributeName: PARTITION_KEY, KeyType: 'HASH' },
        { AttributeName: SORT_KEY, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: GLOBAL_INDEXES.map((index) => ({
        IndexName: index.indexName,
        KeySchema: [
          { AttributeName: index.partitionKey, KeyType: 'HASH' },
          { AttributeName: index.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      })),
      StreamSpecification: streamSpecification,
    }),
  );
  await waitUntilTableExists({ client, maxWaitTime: 60, minDelay: 1, maxDelay: 2 }, { TableName: tableName });
  await client.send(
    new UpdateTimeToLiveCommand({
      TableName: tableName,
      TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true },
    }),
  );
  return 'created';
}

/** Turns the stream on (NEW_IMAGE) unless it is; a stream of another view is replaced (disabled, then enabled). */
async function ensureStream(client: DynamoDBClient, tableName: string, current: StreamSpecification | undefined): Promise<void> {
  if (current?.StreamEnabled === true && current.StreamViewType === STREAM_VIEW_TYPE) return;
  if (current?.StreamEnabled === true) {
    await client.send(new UpdateTableCommand({ TableName: tableName, StreamSpecification: { StreamEnabled: false } }));
    await waitUntilTableExists({ client, maxWaitTime: 60, minDelay: 1, maxDelay: 2 }, { TableName: tableName });
  }
  await client.send(new UpdateTableCommand({ TableName: tableName, StreamSpecification: streamSpecification }));
  await waitUntilTableExists({ client, maxWaitTime: 60, minDelay: 1, maxDelay: 2 }, { TableName: tableName });
}
