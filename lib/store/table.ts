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
  /**
   * `ALL` attributes (the default); `KEYS_ONLY`: the table's and the index's keys, for an index whose reader reads each
   * item itself; or the keys and the attributes named (`INCLUDE`). An update writes an index only when it changes what
   * the index holds, so the less an index projects, the fewer writes reach it, each of the smallest size.
   */
  projection?: 'ALL' | 'KEYS_ONLY' | { include: readonly string[] };
}

/**
 * What a sharded list index holds besides the keys: the attributes its lists filter on (a transaction's `status`,
 * `clientId`, `partnerReference`; an audit event's `type`; a delivery's `svcTxId`, which never changes, so that one
 * payment's deliveries are found in its partner's list without reading the others). Its readers read each page's
 * items from the table.
 */
export const LIST_INDEX_ATTRIBUTES = ['status', 'clientId', 'partnerReference', 'type', 'svcTxId'] as const;

/** Generic, overloaded GSIs (all string keys); `keys.ts` decides what goes in them. */
export const GLOBAL_INDEXES: readonly IndexDefinition[] = [
  { indexName: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
  { indexName: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
  { indexName: 'gsi3', partitionKey: 'gsi3pk', sortKey: 'gsi3sk' },
  /**
   * Sparse reconciliation index: only a transaction still waiting for the processor's word (pending or initialized
   * with an intent) carries its keys. Keys only: the reconciliation reads each transaction again, strongly consistent,
   * before it acts, and every write to it costs the least (docs/data-model.md).
   */
  { indexName: 'gsi4', partitionKey: 'gsi4pk', sortKey: 'gsi4sk', projection: 'KEYS_ONLY' },
  /**
   * Sharded lists, newest first: an owner's (gsi5: a partner's transactions over its shards) and the platform's
   * (gsi6: every transaction over more shards). Only what the lists filter on is projected, so an item's updates that
   * change none of it (fees, settlement, revisions) write neither index (docs/data-model.md, sharded lists).
   */
  { indexName: 'gsi5', partitionKey: 'gsi5pk', sortKey: 'gsi5sk', projection: { include: LIST_INDEX_ATTRIBUTES } },
  { indexName: 'gsi6', partitionKey: 'gsi6pk', sortKey: 'gsi6sk', projection: { include: LIST_INDEX_ATTRIBUTES } },
  /**
   * Sparse, sharded outbox: only a pending webhook delivery carries its keys. Keys only: the sweep takes the delivery id
   * from the sort key and the rest from its lease's write, and a write to a delivery that does not move its entry
   * (a claim, with its ~1 KB payload) costs the index nothing.
   */
  { indexName: 'gsi7', partitionKey: 'gsi7pk', sortKey: 'gsi7sk', projection: 'KEYS_ONLY' },
];

const indexSchema = (index: IndexDefinition) => ({
  IndexName: index.indexName,
  KeySchema: [
    { AttributeName: index.partitionKey, KeyType: 'HASH' as const },
    { AttributeName: index.sortKey, KeyType: 'RANGE' as const },
  ],
  Projection:
    typeof index.projection === 'object'
      ? { ProjectionType: 'INCLUDE' as const, NonKeyAttributes: [...index.projection.include] }
      : { ProjectionType: index.projection ?? 'ALL' },
});

/**
 * The table's stream: every change, with the item's new image. The outbox relay reads new pending deliveries
 * from it (functions/outbox-relay.ts; locally infra/local/delivery/stream-relay.ts polls DynamoDB Local's stream).
 */
export const STREAM_VIEW_TYPE = 'NEW_IMAGE' as const;
const streamSpecification: StreamSpecification = { StreamEnabled: true, StreamViewType: STREAM_VIEW_TYPE };

const stringAttribute = (name: string) => ({ AttributeName: name, AttributeType: 'S' as const });

/**
 * Creates the table (on-demand, with every GSI, TTL and the stream) unless it exists; resolves once it is
 * ACTIVE. A table that exists without the stream (made before the outbox relay) gets it, and one without an index
 * of {@link GLOBAL_INDEXES} (made before the index) gets the index.
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
    await ensureIndexes(client, tableName, existing);
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
      GlobalSecondaryIndexes: GLOBAL_INDEXES.map(indexSchema),
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

/**
 * Adds each index of {@link GLOBAL_INDEXES} the table lacks, one at a time: DynamoDB takes one index creation at a
 * time per table (LimitExceededException otherwise), so each waits until the one before is ACTIVE.
 */
async function ensureIndexes(client: DynamoDBClient, tableName: string, existing: TableDescription): Promise<void> {
  const present = new Set((existing.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName));
  for (const index of GLOBAL_INDEXES.filter((candidate) => !present.has(candidate.indexName))) {
    await client.send(
      new UpdateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [stringAttribute(index.partitionKey), stringAttribute(index.sortKey)],
        GlobalSecondaryIndexUpdates: [{ Create: indexSchema(index) }],
      }),
    );
    await waitUntilIndexActive(client, tableName, index.indexName);
  }
}

/** Resolves once the table and its index `indexName` are ACTIVE (an index being built is CREATING), within 60 s. */
async function waitUntilIndexActive(client: DynamoDBClient, tableName: string, indexName: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const index = Table?.GlobalSecondaryIndexes?.find((candidate) => candidate.IndexName === indexName);
    if (Table?.TableStatus === 'ACTIVE' && index?.IndexStatus === 'ACTIVE') return;
    if (Date.now() > deadline) throw new Error(`index ${indexName} of ${tableName} is not ACTIVE after 60 s (${index?.IndexStatus ?? 'missing'})`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
