/**
 * The local stand-in for a Lambda event source mapping on the table's stream: polls DynamoDB Local's stream
 * (DynamoDB Streams API: DescribeStream, GetShardIterator, GetRecords) every ~150 ms and invokes the same
 * handler AWS would (`functions/outbox-relay.ts`) with DynamoDBStreamEvent-shaped records, after applying the
 * same filter pattern as the AWS event source (infra/shared/webhook-delivery.ts).
 *
 * As in AWS: records of a shard are handed over in order; a batch whose handler throws is retried, and one
 * that reports `batchItemFailures` is retried from the lowest reported sequence number, with backoff, up to
 * `retryAttempts` times, after which its records are skipped (logged; the outbox sweep relays them). When a
 * shard closes (rollover), its children are read from their start.
 *
 * Reading starts at the newest record of each open shard (LATEST): what was written before the relay started
 * is the sweep's job (the runtime sweeps at start). If the stream breaks (DynamoDB Local restarted, an iterator
 * expired), the relay starts over from LATEST, and the sweep covers the gap.
 */
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
  type Shard,
} from '@aws-sdk/client-dynamodb-streams';
import type { AttributeValue as LambdaAttributeValue, Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { invokeFunction } from '../lambda/adapter';

export type StreamHandler = (event: DynamoDBStreamEvent, context: Context) => Promise<DynamoDBBatchResponse | void | undefined>;

export interface StreamRelayOptions {
  endpoint: string;
  tableName: string;
  handler: StreamHandler;
  handlerName: string;
  handlerTimeoutSeconds: number;
  /** Lambda filter syntax, exact-match subset (arrays of allowed values, nested objects): only matching records invoke the handler. */
  filterPattern?: Record<string, unknown>;
  batchSize: number;
  retryAttempts: number;
  pollIntervalMs?: number;
  /** Told of errors (reading the stream, the handler throwing, records skipped); the relay keeps going. */
  onError?: (message: string, error?: unknown) => void;
}

export interface StreamRelay {
  /** Resolves once the relay reads the stream (its starting positions are fixed): writes after this are relayed. */
  ready: Promise<void>;
  /** Stops polling; resolves once the handler invocation running (if any) has returned. */
  stop(): Promise<void>;
}

interface ShardReader {
  shardId: string;
  iterator: string | undefined;
  /** Records read and not yet handled successfully (a failing batch being retried). */
  pending: DynamoDBRecord[];
  attempts: number;
  retryAt: number;
}

const POLL_INTERVAL_MS = 150;
/** GetRecords' largest page (DynamoDB Streams). */
const MAX_RECORDS_PER_READ = 1_000;
const RESTART_DELAY_MS = 1_000;
const MAX_RETRY_DELAY_MS = 30_000;
/** How often open shards are looked up again, besides when one closes. */
const REDISCOVER_EVERY_MS = 30_000;

export function startStreamRelay(options: StreamRelayOptions): StreamRelay {
  const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
  // Bounded calls: a DynamoDB Local that died (or a port squatter that accepts and never answers) must not hold
  // the relay, and with it the service's orderly stop, forever.
  const clientOptions = { endpoint: options.endpoint, region: 'local', credentials, maxAttempts: 1, requestHandler: { connectionTimeout: 1_000, requestTimeout: 5_000, throwOnRequestTimeout: true } };
  const dynamo = new DynamoDBClient(clientOptions);
  const streams = new DynamoDBStreamsClient(clientOptions);
  const pollIntervalMs = options.pollIntervalMs ?? POLL_INTERVAL_MS;
  const report = options.onError ?? (() => undefined);

  let stopped = false;
  let wake: (() => void) | undefined;
  let streamArn: string | undefined;
  const readers = new Map<string, ShardReader>();
  /** Shards seen, open or done: a shard not in here is new (a child after a rollover) and is read from its start. */
  const known = new Set<string>();
  let discoveredAt = 0;
  let lastError: string | undefined;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        wake = undefined;
        resolve();
      }, ms);
      wake = () => {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      };
    });

  async function describeShards(arn: string): Promise<Shard[]> {
    const shards: Shard[] = [];
    let start: string | undefined;
    do {
      const { StreamDescription } = await streams.send(new DescribeStreamCommand({ StreamArn: arn, ExclusiveStartShardId: start }));
      shards.push(...(StreamDescription?.Shards ?? []));
      start = StreamDescription?.LastEvaluatedShardId;
    } while (start !== undefined);
    return shards;
  }

  async function openReader(arn: string, shardId: string, position: 'LATEST' | 'TRIM_HORIZON'): Promise<void> {
    const { ShardIterator } = await streams.send(new GetShardIteratorCommand({ StreamArn: arn, ShardId: shardId, ShardIteratorType: position }));
    readers.set(shardId, { shardId, iterator: ShardIterator, pending: [], attempts: 0, retryAt: 0 });
  }

  /** First call: every open shard from LATEST. Later: shards not seen before (children of a closed one) from their start. */
  async function discover(first: boolean): Promise<void> {
    const { Table } = await dynamo.send(new DescribeTableCommand({ TableName: options.tableName }));
    if (Table?.LatestStreamArn === undefined) throw new Error(`table ${options.tableName} has no stream`);
    if (Table.LatestStreamArn !== streamArn) {
      // A new stream (the table was recreated): read it from now on, like the first time.
      if (streamArn !== undefined) report(`[stream-relay] the table's stream changed; reading the new one from now on`);
      streamArn = Table.LatestStreamArn;
      readers.clear();
      known.clear();
      first = true;
    }
    for (const shard of await describeShards(streamArn)) {
      const shardId = shard.ShardId;
      if (shardId === undefined || known.has(shardId)) continue;
      known.add(shardId);
      const open = shard.SequenceNumberRange?.EndingSequenceNumber === undefined;
      if (first && !open) continue;
      await openReader(streamArn, shardId, first ? 'LATEST' : 'TRIM_HORIZON');
    }
    discoveredAt = Date.now();
  }

  /**
   * One step of a shard: read a page of its records (as many as the stream gives, up to 1,000, filtered here as
   * the event source filter does in AWS), or hand the next batch of matching ones to the handler. `true` when the
   * shard had records: the relay reads on at once instead of waiting for the next poll.
   */
  async function readShard(reader: ShardReader): Promise<boolean> {
    if (reader.pending.length === 0) {
      if (reader.iterator === undefined) {
        // Closed and fully handled: its children are found by the next discovery.
        readers.delete(reader.shardId);
        discoveredAt = 0;
        return false;
      }
      const page = await streams.send(new GetRecordsCommand({ ShardIterator: reader.iterator, Limit: MAX_RECORDS_PER_READ }));
      reader.iterator = page.NextShardIterator;
      reader.pending = (page.Records ?? []).map((record) => toLambdaRecord(record, streamArn ?? '')).filter((record) => matches(options.filterPattern, record));
      reader.attempts = 0;
      if (reader.pending.length === 0) return (page.Records ?? []).length > 0;
    } else if (Date.now() < reader.retryAt) {
      return false;
    }
    await invoke(reader);
    return true;
  }

  /**
   * One handler invocation for the first `batchSize` of a shard's pending records; what succeeded is dropped, the
   * rest retried later (the records after the batch wait their turn, in order).
   */
  async function invoke(reader: ShardReader): Promise<void> {
    const records = reader.pending.slice(0, options.batchSize);
    const after = reader.pending.slice(options.batchSize);
    let retryFrom: number;
    try {
      const response = await invokeFunction(options.handler, { Records: records }, options.handlerName, options.handlerTimeoutSeconds * 1000);
      const failed = new Set((response ?? undefined)?.batchItemFailures?.map((failure) => failure.itemIdentifier));
      const index = records.findIndex((record) => failed.has(record.dynamodb?.SequenceNumber ?? ''));
      // A reported identifier that is no record's sequence number fails the whole batch, as in Lambda.
      retryFrom = failed.size > 0 && index === -1 ? 0 : index;
    } catch (error) {
      report(`[stream-relay] ${options.handlerName} failed; retrying its batch`, error);
      retryFrom = 0;
    }
    if (retryFrom === -1) {
      reader.pending = after;
      reader.attempts = 0;
      return;
    }
    reader.pending = [...records.slice(retryFrom), ...after];
    reader.attempts += 1;
    if (reader.attempts > options.retryAttempts) {
      report(`[stream-relay] skipping ${records.length - retryFrom} stream records after ${options.retryAttempts} retries (the outbox sweep relays them)`);
      reader.pending = after;
      reader.attempts = 0;
      return;
    }
    reader.retryAt = Date.now() + Math.min(MAX_RETRY_DELAY_MS, 500 * 2 ** reader.attempts);
  }

  async function run(markReady: () => void): Promise<void> {
    let first = true;
    while (!stopped) {
      try {
        if (first || Date.now() - discoveredAt > REDISCOVER_EVERY_MS) await discover(first);
        if (first) markReady();
        first = false;
        lastError = undefined;
        let busy = false;
        for (const reader of [...readers.values()]) {
          if (stopped) break;
          if (await readShard(reader)) busy = true;
        }
        // As Lambda's poller: on at once while a shard has records, a poll interval apart once all are idle.
        if (!busy) await sleep(pollIntervalMs);
      } catch (error) {
        // Start over from LATEST: the sweep covers what is missed meanwhile. Report a given failure once.
        const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        if (message !== lastError) report('[stream-relay] reading the stream failed; starting over', error);
        lastError = message;
        streamArn = undefined;
        readers.clear();
        known.clear();
        first = true;
        if (!stopped) await sleep(RESTART_DELAY_MS);
      }
    }
  }

  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const running = run(markReady);
  return {
    ready,
    async stop() {
      stopped = true;
      wake?.();
      await running;
      markReady();
      dynamo.destroy();
      streams.destroy();
    },
  };
}

/** A stream record as Lambda delivers it to a DynamoDB event source's function (the same JSON; epoch-second times). */
function toLambdaRecord(record: StreamRecord, streamArn: string): DynamoDBRecord {
  const data = record.dynamodb ?? {};
  // The SDK's and Lambda's AttributeValue types describe the same JSON ({ S: "…" }, { N: "…" }, …).
  const image = (value: unknown) => value as Record<string, LambdaAttributeValue> | undefined;
  return {
    eventID: record.eventID,
    eventName: record.eventName,
    eventVersion: record.eventVersion ?? '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: record.awsRegion ?? 'local',
    dynamodb: {
      ApproximateCreationDateTime: data.ApproximateCreationDateTime === undefined ? undefined : Math.floor(data.ApproximateCreationDateTime.getTime() / 1000),
      Keys: image(data.Keys),
      NewImage: image(data.NewImage),
      OldImage: image(data.OldImage),
      SequenceNumber: data.SequenceNumber,
      SizeBytes: data.SizeBytes,
      StreamViewType: data.StreamViewType,
    },
    eventSourceARN: streamArn,
  };
}

/**
 * Lambda's event filtering, the exact-match subset: every key of the pattern must be present; an array lists
 * the allowed values, an object matches the record's object under that key. No pattern: everything matches.
 */
export function matches(pattern: Record<string, unknown> | undefined, value: unknown): boolean {
  if (pattern === undefined) return true;
  if (typeof value !== 'object' || value === null) return false;
  return Object.entries(pattern).every(([key, expected]) => {
    const actual = (value as Record<string, unknown>)[key];
    if (Array.isArray(expected)) return expected.includes(actual);
    return matches(expected as Record<string, unknown>, actual);
  });
}
