/**
 * Composes the local runtime from its parts so that `npm start` and the integration tests start the same
 * thing. Each part is stopped in reverse order of starting, so the HTTP API, started last, stops first: it
 * answers the requests already running (which may still call the processor or the rails and write the table)
 * before the settlement timer (its running settlement finishes), the webhook delivery pipeline (its running
 * consumer batch finishes), the sandbox rails, the sandbox processor and DynamoDB Local go.
 *
 * `settlementSchedule` (`SETTLEMENT_SCHEDULE`) and `reconciliationSchedule` (`RECONCILIATION_SCHEDULE`) are checked
 * before anything starts: a schedule the local timer cannot run stops the start with a message, rather than a
 * service that silently never settles or never reconciles.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ensureTable } from '../../../lib/store/table';
import { RECONCILIATION } from '../../shared/reconciliation';
import { SETTLEMENT_CONTINUATIONS } from '../../shared/settlement-continuation';
import { SETTLEMENT_RUN_TIMEOUT_SECONDS } from '../../../lib/routes';
import { type SqsConsumer, LocalDeliveryQueue } from '../delivery/queue';
import { startDeliveryPipeline, type SweepHandler } from '../delivery/pipeline';
import { startSupervisedDynamoDbLocal } from './dynamodb-local';
import { startHttpApi } from './http-api';
import { loadFunction } from '../lambda/load-function';
import { startProcessorSandbox } from '../sandbox/processor';
import { startRailsSandbox } from '../sandbox/rails';
import { isSandboxPath, sandboxCheckout } from '../sandbox/checkout/checkout';
import { parseRate } from '../../shared/schedule';
import { invokeAsScheduled, type ScheduledHandler, startRateTimer } from './settlement-timer';
import { stopsInReverse } from '../stops';


export interface LocalRuntimeOptions {
  httpPort: number;
  dynamoPort: number;
  /** `undefined`: DynamoDB Local keeps its data in memory. */
  dataDir: string | undefined;
  tableName: string;
  /**
   * `stateDir`: where the sandbox processor keeps its state; `undefined` keeps it in memory. `publishableKey`: what
   * a browser pays with through the sandbox (its Stripe.js stand-in at `${processorUrl}/v3/`).
   */
  processor: {
    port: number;
    secretKey: string;
    publishableKey: string;
    webhookSecret: string;
    stateDir?: string | undefined;
    /** `PROCESSOR_SANDBOX_DROP_EVENTS`: the sandbox records its events but sends none (until told otherwise). */
    dropEvents?: boolean | undefined;
  };
  /** The sandbox payout rails; `stateDir`: where they keep their transfers and paid keys (`undefined`: in memory). */
  rails: { port: number; keys: { railA: string; railB: string }; stateDir?: string | undefined };
  /** `SETTLEMENT_SCHEDULE`: a rate expression (`rate(5 minutes)`; seconds allowed locally); unset: no timer. */
  settlementSchedule?: string | undefined;
  /** `RECONCILIATION_SCHEDULE`: a rate expression as above, or `off`; unset: no timer. */
  reconciliationSchedule?: string | undefined;
  /** The partner webhook delivery queue's SQS front (`WEBHOOK_QUEUE_URL` must point at it). */
  webhookQueue: { port: number };
  /**
   * Serves the sandbox checkout at `/sandbox` (`../sandbox/checkout/`: the example partner backend in a process of its
   * own, started on the first visit); `stateDir`: where its partner is kept.
   */
  sandboxCheckout?: { adminToken: () => Promise<string>; stateDir?: string | undefined };
}

export interface LocalRuntime {
  apiUrl: string;
  processorUrl: string;
  /** The sandbox rails' base URL (rail A at `${railsUrl}/rail-a`). */
  railsUrl: string;
  /** The settlement timer's interval in milliseconds; `undefined`: no timer (SETTLEMENT_SCHEDULE unset). */
  settlementIntervalMs: number | undefined;
  /** The reconciliation timer's interval in milliseconds; `undefined`: no timer (RECONCILIATION_SCHEDULE off or unset). */
  reconciliationIntervalMs: number | undefined;
  dynamoEndpoint: string;
  /** The partner webhook delivery queue's URL (its SQS front). */
  webhookQueueUrl: string;
  /** The local delivery queue: its dead-letter list (`deadLetters()`) and depth. */
  webhookQueue: LocalDeliveryQueue;
  /** DynamoDB Local's Java process now (a new one after a restart). */
  readonly dynamoPid: number;
  /** Settles when a part died and could not be brought back (DynamoDB Local would not restart). */
  failed: Promise<Error>;
  stop(): Promise<void>;
}

export async function startLocalRuntime(options: LocalRuntimeOptions): Promise<LocalRuntime> {
  const settlementIntervalMs = options.settlementSchedule === undefined ? undefined : localInterval('SETTLEMENT_SCHEDULE', options.settlementSchedule);
  const reconciliationIntervalMs =
    options.reconciliationSchedule === undefined || options.reconciliationSchedule === 'off'
      ? undefined
      : localInterval('RECONCILIATION_SCHEDULE', options.reconciliationSchedule);
  const stops = stopsInReverse();
  const { stop } = stops;
  try {
    const dynamo = await startSupervisedDynamoDbLocal({
      port: options.dynamoPort,
      dataDir: options.dataDir,
      prepare: (endpoint) => createTable(endpoint, options.tableName),
    });
    stops.push(dynamo.stop);
    // Events go to the processor webhook endpoint; until it answers 2xx the sandbox retries, as Stripe does.
    const processor = await startProcessorSandbox({
      port: options.processor.port,
      secretKey: options.processor.secretKey,
      publishableKey: options.processor.publishableKey,
      webhookSecret: options.processor.webhookSecret,
      webhookUrl: `http://127.0.0.1:${options.httpPort}/api/v1/webhooks/processor`,
      stateDir: options.processor.stateDir,
      dropEvents: options.processor.dropEvents,
    });
    stops.push(processor.close);
    const rails = await startRailsSandbox({ port: options.rails.port, keys: options.rails.keys, stateDir: options.rails.stateDir });
    stops.push(rails.close);
    // Settlement continuations: a run that cannot finish in its time sends the rest here (the same SQS front).
    const continuations = new LocalDeliveryQueue({
      name: SETTLEMENT_CONTINUATIONS.name,
      visibilityTimeoutSeconds: SETTLEMENT_CONTINUATIONS.visibilityTimeoutSeconds,
      maxReceiveCount: SETTLEMENT_CONTINUATIONS.maxReceiveCount,
      batchSize: SETTLEMENT_CONTINUATIONS.batchSize,
      maxConcurrency: SETTLEMENT_CONTINUATIONS.maxConcurrency,
      consumer: await loadFunction<SqsConsumer>('settlement-continuation'),
      consumerName: 'settlement-continuation',
      consumerTimeoutSeconds: SETTLEMENT_CONTINUATIONS.consumerTimeoutSeconds,
      onDeadLetter: (letter) => console.error(`[settlement-continuations] message ${letter.messageId} moved to the dead-letter list after ${letter.receiveCount} receives`),
      onConsumerError: (error) => console.error('[settlement-continuations] a continued settlement run failed; it is received again', error),
    });
    stops.push(() => continuations.stop());
    // Partner webhooks: outbox (the table's stream, and a sweep) → queue → consumer, the handlers of functions/.
    const delivery = await startDeliveryPipeline({
      otherQueues: { [SETTLEMENT_CONTINUATIONS.name]: continuations },
      dynamoEndpoint: dynamo.endpoint,
      tableName: options.tableName,
      queuePort: options.webhookQueue.port,
      consumer: await loadFunction<SqsConsumer>('webhook-delivery'),
      relay: await loadFunction('outbox-relay'),
      sweep: await loadFunction<SweepHandler>('outbox-sweep'),
    });
    stops.push(delivery.stop);
    if (settlementIntervalMs !== undefined) {
      const settle = await loadFunction<ScheduledHandler>('settlement-scheduled');
      const timer = startRateTimer({
        intervalMs: settlementIntervalMs,
        run: invokeAsScheduled(settle, { functionName: 'settlement-scheduled', timeoutMs: SETTLEMENT_RUN_TIMEOUT_SECONDS * 1000 }),
        onError: (error) => console.error('[settlement-schedule] the settlement run failed; the next one tries again', error),
        onSkip: () => console.warn('[settlement-schedule] the previous settlement run is still going: this one is skipped'),
      });
      stops.push(timer.stop);
    }
    if (reconciliationIntervalMs !== undefined) {
      const reconcile = await loadFunction<ScheduledHandler>('reconciliation-scheduled');
      const timer = startRateTimer({
        intervalMs: reconciliationIntervalMs,
        run: invokeAsScheduled(reconcile, { functionName: 'reconciliation-scheduled', timeoutMs: RECONCILIATION.timeoutSeconds * 1000 }),
        onError: (error) => console.error('[reconciliation-schedule] the reconciliation run failed; the next one tries again', error),
        onSkip: () => console.warn('[reconciliation-schedule] the previous reconciliation run is still going: this one is skipped'),
      });
      stops.push(timer.stop);
    }
    const sandbox =
      options.sandboxCheckout === undefined
        ? undefined
        : sandboxCheckout({
            apiOrigin: `http://127.0.0.1:${options.httpPort}`,
            processorJsUrl: `${processor.url}/v3/`,
            adminToken: options.sandboxCheckout.adminToken,
            stateDir: options.sandboxCheckout.stateDir,
          });
    const api = await startHttpApi({
      port: options.httpPort,
      host: '127.0.0.1',
      mounts: sandbox === undefined ? [] : [{ matches: isSandboxPath, handle: sandbox.handle }],
    });
    stops.push(api.close);
    // Stopped before the HTTP API (pushed after it): its requests and reconciliations call the API.
    if (sandbox !== undefined) stops.push(sandbox.stop);
    return {
      apiUrl: api.url,
      processorUrl: processor.url,
      railsUrl: rails.url,
      settlementIntervalMs,
      reconciliationIntervalMs,
      dynamoEndpoint: dynamo.endpoint,
      webhookQueueUrl: delivery.queueUrl,
      webhookQueue: delivery.queue,
      get dynamoPid() {
        return dynamo.pid;
      },
      failed: dynamo.failed,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The interval of a local schedule (`SETTLEMENT_SCHEDULE` ...), or an error that names the variable and says what to write. */
function localInterval(variable: string, schedule: string): number {
  try {
    return parseRate(schedule, { allowSeconds: true });
  } catch (error) {
    throw new Error(`${variable} "${schedule}": ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Creates the table unless it exists: on first start, and again when DynamoDB Local comes back in memory. */
async function createTable(endpoint: string, tableName: string): Promise<void> {
  const client = new DynamoDBClient({ endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  try {
    await ensureTable(client, tableName);
  } finally {
    client.destroy();
  }
}
