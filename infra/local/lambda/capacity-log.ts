/**
 * What each DynamoDB call of a function costs, and where it lands: with `DYNAMODB_CAPACITY_LOG` set, every call a
 * function makes asks for `ReturnConsumedCapacity: 'INDEXES'` and appends one JSON line to that file: the function,
 * the command, and each partition it touched, on the table or on an index, with the capacity units DynamoDB Local
 * reported for it. The capacity model (`npm run bench -- capacity`, docs/performance.md) reads the file.
 *
 * DynamoDB reports units per table and per index, not per item, and not which index partitions a write changed. So
 * each written item is read before and after the call (strongly consistent, by a client of its own that nothing
 * records): an index whose entry for the item appeared, changed or went is touched in the partitions of its old and
 * new keys. The table's units are shared among the items by their size, an index's among the entries it changed.
 * Local only: the reads around each write are extra calls, and the file holds key values.
 */
import { appendFileSync } from 'node:fs';
import { type AttributeValue, type ConsumedCapacity, DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { GLOBAL_INDEXES, PARTITION_KEY, SORT_KEY } from '../../../lib/store/table';
import { invokedFunctionName } from './adapter';

type Item = Record<string, AttributeValue>;

/** One partition a call touched: `on` the table or an index (`gsi1` ...), its partition key value, and the units. */
export interface CapacityTouch {
  on: string;
  partition: string;
  access: 'read' | 'write';
  units: number;
}

/** One line of the log. */
export interface CapacityRecord {
  /** Epoch ms when the call returned. */
  at: number;
  /** The function whose invocation made the call; `null` outside any (the runtime's own setup). */
  fn: string | null;
  command: string;
  touches: CapacityTouch[];
  /** The call failed (a condition, a cancelled transaction): DynamoDB returns no consumed capacity then. */
  failed?: string;
  /** What this log could not make of the call (a shape it does not know): the model refuses such a log. */
  unreadable?: string;
}

const MIDDLEWARE_NAME = 'localCapacityLog';
const ITEM_COMMANDS = new Set([
  'GetItemCommand',
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'QueryCommand',
  'ScanCommand',
  'BatchGetItemCommand',
  'BatchWriteItemCommand',
  'TransactGetItemsCommand',
  'TransactWriteItemsCommand',
]);

/** Records every item call `client` makes to `file` (once per client). */
export function recordCapacity(client: DynamoDBClient, file: string): void {
  if (client.middlewareStack.identify().some((entry) => entry.startsWith(`${MIDDLEWARE_NAME} `))) return;
  const config = client.config;
  // Its own client: the reads around a write are not the service's calls.
  const snapshots = new DynamoDBClient({ region: config.region, endpoint: config.endpoint, credentials: config.credentials });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (!ITEM_COMMANDS.has(context.commandName ?? '')) return next(args);
      return next({ ...args, input: { ...(args.input as object), ReturnConsumedCapacity: 'INDEXES' } });
    },
    { step: 'initialize', name: `${MIDDLEWARE_NAME}Ask`, priority: 'low' },
  );
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const command = context.commandName ?? '';
      if (!ITEM_COMMANDS.has(command)) return next(args);
      // At the build step the input is marshalled (lib-dynamodb marshalls before serializing).
      const input = args.input as Record<string, any>;
      const written = writtenKeys(command, input);
      const before = await Promise.all(written.map(({ table, key }) => read(snapshots, table, key)));
      const fn = invokedFunctionName() ?? null;
      try {
        const result = await next(args);
        const output = result.output as { ConsumedCapacity?: ConsumedCapacity | ConsumedCapacity[] };
        const after = await Promise.all(written.map(({ table, key }) => read(snapshots, table, key)));
        const consumed = output.ConsumedCapacity === undefined ? [] : [output.ConsumedCapacity].flat();
        try {
          const touches =
            written.length > 0
              ? writeTouches(consumed, written.map((entry, i) => ({ ...entry, before: before[i], after: after[i] })))
              : readTouches(command, input, consumed, result.output as Record<string, any>);
          log(file, { at: Date.now(), fn, command, touches });
        } catch (error) {
          // The log must never fail the service's call: the model stops at a line it cannot read.
          log(file, { at: Date.now(), fn, command, touches: [], unreadable: error instanceof Error ? error.message : String(error) });
        }
        return result;
      } catch (error) {
        log(file, { at: Date.now(), fn, command, touches: [], failed: error instanceof Error ? error.name : String(error) });
        throw error;
      }
    },
    { step: 'build', name: MIDDLEWARE_NAME, priority: 'high' },
  );
}

const log = (file: string, record: CapacityRecord) => appendFileSync(file, `${JSON.stringify(record)}\n`);

async function read(client: DynamoDBClient, table: string, key: Item): Promise<Item | undefined> {
  const { Item } = await client.send(new GetItemCommand({ TableName: table, Key: key, ConsistentRead: true }));
  return Item;
}

interface WrittenItem {
  table: string;
  key: Item;
  /** A ConditionCheck: read by the transaction, never changed. */
  checkOnly: boolean;
}

const keyOf = (item: Item): Item => ({ [PARTITION_KEY]: item[PARTITION_KEY]!, [SORT_KEY]: item[SORT_KEY]! });

/** The items a write command writes (or checks, in a transaction). */
function writtenKeys(command: string, input: Record<string, any>): WrittenItem[] {
  switch (command) {
    case 'PutItemCommand':
      return [{ table: input.TableName, key: keyOf(input.Item), checkOnly: false }];
    case 'UpdateItemCommand':
    case 'DeleteItemCommand':
      return [{ table: input.TableName, key: input.Key, checkOnly: false }];
    case 'TransactWriteItemsCommand':
      return (input.TransactItems as Array<Record<string, any>>).map((entry) => {
        if (entry.Put !== undefined) return { table: entry.Put.TableName, key: keyOf(entry.Put.Item), checkOnly: false };
        const [kind, operation] = Object.entries(entry)[0]!;
        return { table: operation.TableName, key: operation.Key, checkOnly: kind === 'ConditionCheck' };
      });
    case 'BatchWriteItemCommand':
      return Object.entries(input.RequestItems as Record<string, Array<Record<string, any>>>).flatMap(([table, requests]) =>
        requests.map((request) => ({ table, key: request.PutRequest !== undefined ? keyOf(request.PutRequest.Item) : request.DeleteRequest.Key, checkOnly: false })),
      );
    default:
      return [];
  }
}

const ATTRIBUTE_TYPES = new Set(['S', 'N', 'B', 'BOOL', 'NULL', 'M', 'L', 'SS', 'NS', 'BS']);

/**
 * A value's size as DynamoDB counts it, near enough to share units among items: marshalled (`{ S: 'x' }`, what a
 * request holds at this step) or plain (what lib-dynamodb has already unmarshalled in an answer).
 */
function sizeOf(value: unknown): number {
  if (value === null || value === undefined || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number' || typeof value === 'bigint') return Math.ceil(String(value).length / 2) + 1;
  if (value instanceof Uint8Array) return value.length;
  if (Array.isArray(value) || value instanceof Set) return 3 + [...value].reduce((sum: number, element) => sum + 1 + sizeOf(element), 0);
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 1 && ATTRIBUTE_TYPES.has(entries[0]![0])) return sizeOf(entries[0]![1]);
  return 3 + itemSize(value as Record<string, unknown>);
}

const itemSize = (item: Record<string, unknown> | undefined) => (item === undefined ? 0 : Object.entries(item).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + sizeOf(value), 0));

const tableUnits = (capacity: ConsumedCapacity) =>
  capacity.Table?.CapacityUnits ?? (capacity.CapacityUnits ?? 0) - Object.values(capacity.GlobalSecondaryIndexes ?? {}).reduce((sum, index) => sum + (index.CapacityUnits ?? 0), 0);

/** Shares `units` among `weights`, in proportion. */
const share = (units: number, weights: number[]) => {
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  return weights.map((weight) => (total === 0 ? 0 : (units * weight) / total));
};

const sameItem = (a: Item | undefined, b: Item | undefined) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

function writeTouches(consumed: ConsumedCapacity[], items: Array<WrittenItem & { before: Item | undefined; after: Item | undefined }>): CapacityTouch[] {
  const touches: CapacityTouch[] = [];
  for (const capacity of consumed) {
    const mine = items.filter((item) => item.table === capacity.TableName);
    const units = share(tableUnits(capacity), mine.map((item) => Math.max(1, Math.ceil(Math.max(itemSize(item.before), itemSize(item.after)) / 1024))));
    mine.forEach((item, i) => touches.push({ on: 'table', partition: item.key[PARTITION_KEY]?.S ?? '?', access: 'write', units: units[i]! }));
    for (const index of GLOBAL_INDEXES) {
      const indexUnits = capacity.GlobalSecondaryIndexes?.[index.indexName]?.CapacityUnits ?? 0;
      // The index partitions each changed item's entry left and entered (one when its key stayed).
      const entries = mine
        .filter((item) => !item.checkOnly && !sameItem(item.before, item.after))
        .flatMap((item) => [...new Set([item.before?.[index.partitionKey]?.S, item.after?.[index.partitionKey]?.S].filter((pk): pk is string => pk !== undefined))]);
      if (entries.length === 0) continue;
      const each = indexUnits / entries.length;
      for (const partition of entries) touches.push({ on: index.indexName, partition, access: 'write', units: each });
    }
  }
  return touches;
}

/** The partition value a Query's key condition names (`<partition key> = :value`, or its `#name`). */
function queriedPartition(input: Record<string, any>): string {
  const partitionKey = input.IndexName === undefined ? PARTITION_KEY : (GLOBAL_INDEXES.find((index) => index.indexName === input.IndexName)?.partitionKey ?? '?');
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  for (const match of String(input.KeyConditionExpression ?? '').matchAll(/([#\w]+)\s*=\s*(:\w+)/g)) {
    const name = match[1]!.startsWith('#') ? names[match[1]!] : match[1];
    if (name === partitionKey) return (input.ExpressionAttributeValues?.[match[2]!] as AttributeValue | undefined)?.S ?? '?';
  }
  return '?';
}

function readTouches(command: string, input: Record<string, any>, consumed: ConsumedCapacity[], output: Record<string, any>): CapacityTouch[] {
  if (command === 'QueryCommand' || command === 'ScanCommand') {
    const capacity = consumed[0];
    if (capacity === undefined) return [];
    const on = input.IndexName ?? 'table';
    const units = on === 'table' ? tableUnits(capacity) : (capacity.GlobalSecondaryIndexes?.[on]?.CapacityUnits ?? capacity.CapacityUnits ?? 0);
    return [{ on, partition: command === 'ScanCommand' ? '(scan)' : queriedPartition(input), access: 'read', units }];
  }
  const keysRead: Array<{ table: string; key: Item; size: number }> =
    command === 'GetItemCommand'
      ? [{ table: input.TableName, key: input.Key, size: itemSize(output.Item) }]
      : command === 'BatchGetItemCommand'
        ? Object.entries(input.RequestItems as Record<string, { Keys: Item[] }>).flatMap(([table, request]) => {
            // The answer is unmarshalled already (plain values), the request not.
            const found = (output.Responses?.[table] ?? []) as Array<Record<string, unknown>>;
            const same = (item: Record<string, unknown>, key: Item) => item[PARTITION_KEY] === key[PARTITION_KEY]?.S && item[SORT_KEY] === key[SORT_KEY]?.S;
            return request.Keys.map((key) => ({ table, key, size: itemSize(found.find((item) => same(item, key))) }));
          })
        : (input.TransactItems as Array<{ Get: { TableName: string; Key: Item } }>).map(({ Get }) => ({ table: Get.TableName, key: Get.Key, size: 0 }));
  return consumed.flatMap((capacity) => {
    const mine = keysRead.filter((entry) => entry.table === capacity.TableName);
    const units = share(tableUnits(capacity), mine.map((entry) => Math.max(1, Math.ceil(entry.size / 4096))));
    return mine.map((entry, i) => ({ on: 'table', partition: entry.key[PARTITION_KEY]?.S ?? '?', access: 'read' as const, units: units[i]! }));
  });
}
