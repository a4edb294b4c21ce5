/**
 * A world of its own for a test file that follows payments through the real pipeline as `npm start` composes it
 * (infra/local/runtime/runtime.ts): a sandbox processor whose signed events go to the file's HTTP API, the processor
 * webhook handler, the table's stream read by the stream relay, the local queue behind its SQS front, the real
 * consumer (functions/webhook-delivery.ts), and partner endpoints that are real HTTP servers on 127.0.0.1.
 *
 * The pipeline runs against a table of its own in the integration run's DynamoDB Local: its stream relay and
 * sweep would otherwise deliver the deliveries other test files write into the shared table (and the file's
 * consumer would make attempts those files count). `WEBHOOK_RETRY_BASE_MS` is small, so the three attempts of a
 * failing delivery take about 2 s.
 *
 * Call {@link useDeliveryWorld} at the top level of the test file, before it imports any service module: the
 * service's configuration (lib/config.ts) is parsed once, at import, from the environment set here.
 */
import { afterAll, beforeAll } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import Stripe from 'stripe';
import type { SqsConsumer } from '../../infra/local/delivery/queue';
import { type DeliveryPipeline, startDeliveryPipeline, type SweepHandler } from '../../infra/local/delivery/pipeline';
import { startProcessorSandbox, type ProcessorSandbox } from '../../infra/local/sandbox/processor';
import type { StreamHandler } from '../../infra/local/delivery/stream-relay';
import { ensureTable } from '../../lib/store/table';
import type { TestApi } from './api';
import { type ListedDelivery, watchPipeline } from './pipeline-idle';
import { freePort } from './ports';

export interface DeliveryWorld extends Omit<SandboxWorld, 'apiPort'> {
  /** The file's HTTP API (from `beforeAll` on). */
  api(): TestApi;
  /**
   * Resolves once the pipeline has nothing in flight or due for the deliveries `listDeliveries` returns
   * (test/support/pipeline-idle.ts): then what has arrived is all that will.
   */
  untilIdle(listDeliveries: () => Promise<ListedDelivery[]>, timeoutMs?: number): Promise<void>;
  /** Runs the outbox sweep now, as its timer would. */
  sweepNow(): Promise<void>;
}

export interface SandboxWorld {
  /** The port the file's HTTP API must listen on: the sandbox sends its events there. */
  apiPort: number;
  processorWebhookSecret: string;
  sandbox: ProcessorSandbox;
  /** The stripe SDK on the sandbox, with its secret key: a browser's confirmations, the processor's refunds. */
  stripe: Stripe;
}

/**
 * A sandbox processor of the file's own, whose signed events go to the file's API (on the port reserved here),
 * and the service pointed at it (its environment, read when the service's modules load: call this first).
 */
export async function useSandboxProcessor(name: string): Promise<SandboxWorld> {
  const secretKey = `sk_test_${name}`;
  const processorWebhookSecret = `whsec_${name}`;
  const apiPort = await freePort();
  const sandbox = await startProcessorSandbox({
    port: await freePort(),
    secretKey,
    publishableKey: `pk_test_${name}`,
    webhookSecret: processorWebhookSecret,
    webhookUrl: `http://127.0.0.1:${apiPort}/api/v1/webhooks/processor`,
    retryDelaysMs: [],
  });
  process.env.PROCESSOR_API_BASE = sandbox.url;
  process.env.PROCESSOR_SECRET_KEY = secretKey;
  process.env.PROCESSOR_WEBHOOK_SECRET = processorWebhookSecret;
  return { apiPort, processorWebhookSecret, sandbox, stripe: new Stripe(secretKey, { host: '127.0.0.1', port: sandbox.port, protocol: 'http' }) };
}

export async function useDeliveryWorld(name: string): Promise<DeliveryWorld> {
  const { apiPort, processorWebhookSecret, sandbox, stripe } = await useSandboxProcessor(name);
  const tableName = `partner-payments-${name}-${randomUUID().slice(0, 8)}`;
  const dynamoEndpoint = process.env.DYNAMODB_ENDPOINT ?? '';
  const queuePort = await freePort();
  process.env.TABLE_NAME = tableName;
  process.env.WEBHOOK_QUEUE_PORT = String(queuePort);
  process.env.WEBHOOK_QUEUE_URL = `http://127.0.0.1:${queuePort}/000000000000/partner-webhooks`;
  process.env.WEBHOOK_RETRY_BASE_MS = '100';
  process.env.PROCESSOR_FEE_PERCENT = '2.9';
  const setupClient = new DynamoDBClient({ endpoint: dynamoEndpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  await ensureTable(setupClient, tableName);

  const { TestApi: Api } = await import('./api');
  const consumer = (await import('../../functions/webhook-delivery')).handler as unknown as SqsConsumer;
  const watch = watchPipeline(
    (await import('../../functions/outbox-relay')).handler as StreamHandler,
    (await import('../../functions/outbox-sweep')).handler as SweepHandler,
  );

  let api: TestApi | undefined;
  let pipeline: DeliveryPipeline | undefined;
  beforeAll(async () => {
    pipeline = await startDeliveryPipeline({ dynamoEndpoint, tableName, queuePort, consumer, relay: watch.relay, sweep: watch.sweep });
    api = await Api.start({ port: apiPort });
  }, 30_000);
  afterAll(async () => {
    // The runtime's order: the API first, then the pipeline, the sandbox, and last the table.
    await api?.close();
    await pipeline?.stop();
    await sandbox.close();
    await setupClient.send(new DeleteTableCommand({ TableName: tableName })).catch(() => undefined);
    setupClient.destroy();
    // The API's graceful close alone may take its whole grace (10 s) when a client keeps a connection busy.
  }, 30_000);

  const started = (value: DeliveryPipeline | undefined): DeliveryPipeline => {
    if (value === undefined) throw new Error('the delivery world starts its pipeline in beforeAll');
    return value;
  };
  return {
    processorWebhookSecret,
    sandbox,
    stripe,
    api: () => {
      if (api === undefined) throw new Error('the delivery world starts its API in beforeAll');
      return api;
    },
    untilIdle: (listDeliveries, timeoutMs) => watch.untilIdle(started(pipeline), listDeliveries, timeoutMs),
    sweepNow: () => started(pipeline).sweepNow(),
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `probe` until it returns a value. */
export async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}
