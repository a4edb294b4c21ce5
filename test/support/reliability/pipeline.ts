/**
 * The whole local delivery pipeline for a reliability suite (outbox → stream relay → fair queue with SQS
 * semantics → the real consumer), on a table of its own in the run's DynamoDB Local, with the service's
 * settings shortened where the code takes them: `WEBHOOK_RETRY_BASE_MS` (env), the sender's timeout and the
 * endpoints' breaker timings (the consumer's dependencies; the code paths are the same). Partner endpoints are
 * paths of one {@link BehavingReceiver}.
 *
 * Call {@link useReliabilityPipeline} at the top level of the test file, before it imports any service module
 * (lib/config.ts parses the environment once, at import).
 */
import { afterAll, beforeAll, expect } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DeliveryPipeline, SweepHandler } from '../../../infra/local/delivery/pipeline';
import type { SqsConsumer } from '../../../infra/local/delivery/queue';
import type { StreamHandler } from '../../../infra/local/delivery/stream-relay';
import type { BreakerSettings } from '../../../lib/domain/endpoint-breaker';
import { ensureTable } from '../../../lib/store/table';
import type { PartnerCredentials, TestApi } from '../api';
import { watchPipeline } from '../pipeline-idle';
import { freePort } from '../ports';
import { type Behaviour, BehavingReceiver } from './receiver';
import { sleep, until } from './tools';

export interface ReliabilityPipelineOptions {
  name: string;
  retryBaseMs: number;
  attemptTimeoutMs: number;
  /** Overrides of `breakerSettings(attemptTimeoutMs)`. */
  breaker?: Partial<BreakerSettings>;
  /** The consumer's invocations at most (default: the service's, 50). */
  consumerConcurrency?: number;
  behaviours: Record<string, Behaviour>;
}

export interface ReliabilityPipeline {
  api(): TestApi;
  pipeline(): DeliveryPipeline;
  receiver: BehavingReceiver;
  /** What the consumer could not process (batch item failures, throws): a healthy run has none. */
  unprocessed: string[];
  /**
   * How long each delivery message of `partnerId` waited in the queue before a consumer received it (its dwell
   * time, as AWS measures fairness: SentTimestamp to ApproximateFirstReceiveTimestamp). A delayed message's includes
   * its delay: meaningful for a partner whose delivery messages are all due at once (no retries). Wake messages (the
   * second wake after a breaker closes is delayed 2 s) are left out.
   */
  dwellTimesOf(partnerId: string): number[];
  /** A webhook endpoint of `partner` at `path` of the receiver, for `transaction_succeeded`; its id. */
  endpoint(partner: PartnerCredentials, path: string): Promise<string>;
  deliveriesOf(partner: PartnerCredentials): Promise<Array<Record<string, any>>>;
  /**
   * Resolves once the pipeline has nothing in flight or due for any delivery of `partners` (test/support/
   * pipeline-idle.ts): then what the receiver has is all it will get.
   */
  untilIdle(partners: PartnerCredentials[], timeoutMs?: number): Promise<void>;
  auditOf(partner: PartnerCredentials): Promise<Array<Record<string, any>>>;
  /** A pending payment of the partner's client moved to succeeded by the processor's signed event; when it was posted. */
  succeededPayment(partner: PartnerCredentials, clientId: string, amountMinor: number): Promise<{ svcTxId: string; postedAt: number }>;
}

export async function useReliabilityPipeline(options: ReliabilityPipelineOptions): Promise<ReliabilityPipeline> {
  const tableName = `partner-payments-${options.name}-${randomUUID().slice(0, 8)}`;
  const dynamoEndpoint = process.env.DYNAMODB_ENDPOINT ?? '';
  const queuePort = await freePort();
  process.env.TABLE_NAME = tableName;
  process.env.WEBHOOK_QUEUE_PORT = String(queuePort);
  process.env.WEBHOOK_QUEUE_URL = `http://127.0.0.1:${queuePort}/000000000000/partner-webhooks`;
  process.env.WEBHOOK_RETRY_BASE_MS = String(options.retryBaseMs);
  const setupClient = new DynamoDBClient({ endpoint: dynamoEndpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  await ensureTable(setupClient, tableName);

  const { TestApi: Api } = await import('../api');
  const { startDeliveryPipeline } = await import('../../../infra/local/delivery/pipeline');
  const { createHandler } = await import('../../../functions/webhook-delivery');
  const { webhookDeliveryDeps } = await import('../../../lib/composition/webhook-deliveries');
  const { createHttpSender } = await import('../../../lib/webhooks/http-sender');
  const { breakerSettings } = await import('../../../lib/domain/endpoint-breaker');
  const watch = watchPipeline(
    (await import('../../../functions/outbox-relay')).handler as StreamHandler,
    (await import('../../../functions/outbox-sweep')).handler as SweepHandler,
  );
  const { eventBody, intentObject, pendingTransaction, signed } = await import('../processor-events');

  const unprocessed: string[] = [];
  const dwell = new Map<string, number[]>();
  const deliver = createHandler({
    ...webhookDeliveryDeps,
    send: createHttpSender({ policy: { allowInsecure: true }, timeoutMs: options.attemptTimeoutMs }),
    breakerSettings: { ...breakerSettings(options.attemptTimeoutMs), ...options.breaker },
  });
  const consumer: SqsConsumer = async (event, context) => {
    for (const { attributes, body } of event.Records) {
      const group = attributes.MessageGroupId ?? '';
      if (attributes.ApproximateReceiveCount === '1' && body.includes('"deliveryId"')) dwell.set(group, [...(dwell.get(group) ?? []), Number(attributes.ApproximateFirstReceiveTimestamp) - Number(attributes.SentTimestamp)]);
    }
    try {
      const response = await deliver(event, context);
      unprocessed.push(...response.batchItemFailures.map((failure) => `batch item failure ${failure.itemIdentifier}`));
      return response;
    } catch (error) {
      unprocessed.push(`consumer threw: ${String(error)}`);
      throw error;
    }
  };
  const receiver = await BehavingReceiver.start(options.behaviours);

  let api: TestApi | undefined;
  let pipeline: DeliveryPipeline | undefined;
  beforeAll(async () => {
    pipeline = await startDeliveryPipeline({ dynamoEndpoint, tableName, queuePort, consumer, relay: watch.relay, sweep: watch.sweep, consumerConcurrency: options.consumerConcurrency });
    api = await Api.start();
  }, 30_000);
  afterAll(async () => {
    await api?.close();
    await pipeline?.stop();
    await receiver.close();
    await setupClient.send(new DeleteTableCommand({ TableName: tableName })).catch(() => undefined);
    setupClient.destroy();
  }, 60_000);

  const started = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`the reliability pipeline starts its ${what} in beforeAll`);
    return value;
  };
  const listed = async (path: string) => {
    const response = await started(api, 'API').admin('GET', path);
    expect(response.status).toBe(200);
    return response.body.items as Array<Record<string, any>>;
  };
  return {
    api: () => started(api, 'API'),
    pipeline: () => started(pipeline, 'pipeline'),
    receiver,
    unprocessed,
    dwellTimesOf: (partnerId) => dwell.get(partnerId) ?? [],
    async endpoint(partner, path) {
      const created = await started(api, 'API').admin('POST', `/admin/partners/${partner.partnerId}/webhook-endpoints`, {
        name: path,
        url: receiver.url(path),
        events: ['transaction_succeeded'],
      });
      if (created.status !== 201) throw new Error(`endpoint not created: ${JSON.stringify(created.body)}`);
      return created.body.id as string;
    },
    deliveriesOf: (partner) => listed(`/admin/partners/${partner.partnerId}/webhook-deliveries?limit=200`),
    untilIdle: (partners, timeoutMs) =>
      watch.untilIdle(
        started(pipeline, 'pipeline'),
        async () => (await Promise.all(partners.map((partner) => listed(`/admin/partners/${partner.partnerId}/webhook-deliveries?limit=200`)))).flat() as Array<{ id: string; status: string }>,
        timeoutMs,
      ),
    auditOf: (partner) => listed(`/admin/audit-events?partner_id=${partner.partnerId}&limit=200`),
    async succeededPayment(partner, clientId, amountMinor) {
      const tx = await pendingTransaction(partner.partnerId, clientId, { amountMinor, currency: 'USD' });
      const body = eventBody('payment_intent.succeeded', intentObject(tx.processorPaymentIntentId ?? '', amountMinor, 'usd'));
      const postedAt = Date.now();
      const post = () =>
        started(api, 'API').request('POST', '/webhooks/processor', {
          headers: { 'content-type': 'application/json', 'processor-signature': signed(body) },
          body,
        });
      // As the processor does: an event answered 503 (DynamoDB Local too busy to answer within the client's timeout,
      // under a loaded run) is sent again after `Retry-After`; what these tests measure starts at the first post
      let answer = await post();
      for (let retry = 0; answer.status === 503 && retry < 5; retry += 1) {
        await new Promise((resolve) => setTimeout(resolve, Number(answer.headers.get('retry-after') ?? '1') * 1_000));
        answer = await post();
      }
      expect(answer.body).toEqual({ received: true, svc_tx_id: tx.svcTxId, status: 'succeeded' });
      return { svcTxId: tx.svcTxId, postedAt };
    },
  };
}

/** Partner A with an endpoint at each of `aPaths`, partner B with one at `bPath` (paths of the receiver), a client each. */
export async function noisyAndQuietPartners(world: ReliabilityPipeline, aPaths: readonly string[], bPath: string) {
  const api = world.api();
  const [a, b] = [await api.createPartner(), await api.createPartner()];
  for (const path of aPaths) await world.endpoint(a, path);
  await world.endpoint(b, bPath);
  return { a, b, aClient: await api.createClient(a), bClient: await api.createClient(b) };
}

/**
 * `count` payments of `partner`'s client, one every `everyMs` (paced, as a quiet partner's traffic comes); then the
 * partner's deliveries, once there is one per payment and every one has succeeded.
 */
export async function paymentsOneAfterAnother(world: ReliabilityPipeline, partner: PartnerCredentials, clientId: string, count: number, everyMs: number) {
  const payments: Array<{ svcTxId: string; postedAt: number }> = [];
  for (let i = 0; i < count; i += 1) {
    payments.push(await world.succeededPayment(partner, clientId, 2_000 + i));
    await sleep(everyMs);
  }
  const deliveries = await until('the paced payments’ deliveries', async () => {
    const found = await world.deliveriesOf(partner);
    return found.length === count && found.every((delivery) => delivery.status === 'succeeded') ? found : undefined;
  }, 30_000, 100);
  return { payments, deliveries };
}
