/**
 * The delivery consumer's log lines carry the delivery's `partner_id` and `svc_tx_id` (as a request's lines
 * about a transaction do), each record its own: the records of one SQS batch are processed at once, so a key
 * appended for one record must not reach another's lines, nor a record that names no delivery.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { SQSEvent } from 'aws-lambda';
import type { WebhookDelivery } from '../../../lib/domain/webhooks';
import type { TestApi as Api, PartnerCredentials } from '../../support/api';
import type { WebhookReceiver as Receiver } from '../../support/webhook-receiver';

// Info lines are what is asserted on: load the service's modules at that level.
const previousLevel = process.env.LOG_LEVEL;
process.env.LOG_LEVEL = 'INFO';
const { createHandler } = await import('../../../functions/webhook-delivery');
const { webhookDeliveryDeps } = await import('../../../lib/composition');
const { newId } = await import('../../../lib/domain/ids');
const { putNewDelivery } = await import('../../../lib/store/deliveries');
const { documentClient } = await import('../../../lib/store/dynamo');
const { createHttpSender } = await import('../../../lib/webhooks/http-sender');
const { TransactWriteCommand } = await import('@aws-sdk/lib-dynamodb');
const { TestApi } = await import('../../support/api');
const { WebhookReceiver } = await import('../../support/webhook-receiver');
const { lambdaContext } = await import('../../support/events');
const { newSvcTxId, pendingDelivery } = await import('../../support/deliveries');
process.env.LOG_LEVEL = previousLevel;

type Deps = Parameters<typeof createHandler>[0];

let api: Api;
const partners: Array<{ credentials: PartnerCredentials; receiver: Receiver; endpointId: string }> = [];

beforeAll(async () => {
  api = await TestApi.start();
  for (let i = 0; i < 2; i++) {
    const credentials = await api.createPartner();
    const receiver = await WebhookReceiver.start();
    const endpoint = await api.admin('POST', `/admin/partners/${credentials.partnerId}/webhook-endpoints`, {
      name: 'Orders',
      url: receiver.url(),
      events: ['transaction_succeeded'],
    });
    if (endpoint.status !== 201) throw new Error(`endpoint not created: ${JSON.stringify(endpoint.body)}`);
    partners.push({ credentials, receiver, endpointId: endpoint.body.id as string });
  }
});
afterAll(async () => {
  await Promise.all(partners.map(({ receiver }) => receiver.close()));
  await api.close();
});

/** A pending delivery of `partner`'s, written as the processor webhook writes one. */
async function newDelivery(partner: (typeof partners)[number]): Promise<WebhookDelivery> {
  const svcTxId = newSvcTxId();
  const partnerId = partner.credentials.partnerId;
  const delivery = pendingDelivery({
    partnerId,
    endpointId: partner.endpointId,
    svcTxId,
    payload: JSON.stringify({
      event: 'transaction_succeeded',
      svc_tx_id: svcTxId,
      partner_id: partnerId,
      client_id: 'merchant-1',
      partner_reference: `order-${svcTxId}`,
      status: 'succeeded',
      amount: 12.34,
      currency: 'USD',
      meta: {},
    }),
  });
  await documentClient.send(new TransactWriteCommand({ TransactItems: [putNewDelivery(delivery)] }));
  return delivery;
}

function sqsEvent(deliveryIds: string[]): SQSEvent {
  return {
    Records: deliveryIds.map((deliveryId) => ({
      messageId: randomUUID(),
      receiptHandle: randomUUID(),
      body: JSON.stringify({ deliveryId }),
      attributes: { ApproximateReceiveCount: '1', SentTimestamp: String(Date.now()), SenderId: 'test', ApproximateFirstReceiveTimestamp: String(Date.now()) },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:local:000000000000:partner-webhooks',
      awsRegion: 'local',
    })),
  };
}

const deps = (overrides: Partial<Deps> = {}): Deps => ({
  ...webhookDeliveryDeps,
  queue: { send: async () => undefined },
  send: createHttpSender({ policy: { allowInsecure: true }, timeoutMs: 5_000 }),
  ...overrides,
});

const jsonLinesOf = (chunks: string[]) =>
  chunks
    .flatMap((chunk) => chunk.split('\n'))
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/**
 * Runs `act` with stdout and stderr captured: the JSON log lines it printed. `act` may wait for a line to be
 * printed (`logged`), rather than guess how long printing takes.
 */
async function logLinesOf(act: (logged: (what: string, matches: (line: Record<string, unknown>) => boolean) => Promise<void>) => Promise<void>): Promise<Array<Record<string, unknown>>> {
  const chunks: string[] = [];
  const logged = async (what: string, matches: (line: Record<string, unknown>) => boolean) => {
    const deadline = Date.now() + 5_000;
    while (!jsonLinesOf(chunks).some(matches)) {
      if (Date.now() > deadline) throw new Error(`no log line ${what} within 5 s`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  const capture = (chunk: string | Uint8Array) => {
    chunks.push(String(chunk));
    return true;
  };
  const out = jest.spyOn(process.stdout, 'write').mockImplementation(capture);
  const err = jest.spyOn(process.stderr, 'write').mockImplementation(capture);
  try {
    await act(logged);
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
  return jsonLinesOf(chunks);
}

describe('webhook delivery log keys', () => {
  it('logs each record of a batch with its own partner_id and svc_tx_id, and none on a record naming no delivery', async () => {
    // Arrange: A's partner answers only once B's record has finished, so the two records interleave
    const [a, b] = [partners[0]!, partners[1]!];
    const [ofA, ofB] = [await newDelivery(a), await newDelivery(b)];
    let releaseA!: () => void;
    a.receiver.answer({ status: 200, release: new Promise<void>((resolve) => (releaseA = resolve)) });
    const handler = createHandler(deps());
    const unknownId = newId.webhookDelivery();

    // Act
    const lines = await logLinesOf(async (logged) => {
      const batch = handler(sqsEvent([ofA.id, ofB.id, unknownId]), lambdaContext());
      await logged(`handling B's record`, (line) => line.message === 'Webhook delivery message handled' && line.deliveryId === ofB.id);
      releaseA();
      expect((await batch).batchItemFailures).toEqual([]);
    });

    // Assert
    const handled = (id: string) => lines.filter((line) => line.message === 'Webhook delivery message handled' && line.deliveryId === id);
    expect(handled(ofA.id)).toEqual([expect.objectContaining({ outcome: 'succeeded', partner_id: a.credentials.partnerId, svc_tx_id: ofA.svcTxId })]);
    expect(handled(ofB.id)).toEqual([expect.objectContaining({ outcome: 'succeeded', partner_id: b.credentials.partnerId, svc_tx_id: ofB.svcTxId })]);
    expect(handled(unknownId)).toHaveLength(1);
    expect(handled(unknownId)[0]).not.toHaveProperty('partner_id');
    expect(handled(unknownId)[0]).not.toHaveProperty('svc_tx_id');
  });

  it('keeps the keys on a record that fails after its delivery was read, and leaves none for the next batch', async () => {
    // Arrange: the endpoint's key cannot be opened (KMS down) for this batch
    const a = partners[0]!;
    const delivery = await newDelivery(a);
    const failing = createHandler(deps({ openSecret: async () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })) }));
    const next = createHandler(deps());
    const unknownId = newId.webhookDelivery();

    // Act
    const lines = await logLinesOf(async () => {
      expect((await failing(sqsEvent([delivery.id]), lambdaContext())).batchItemFailures).toHaveLength(1);
      await next(sqsEvent([unknownId]), lambdaContext());
    });

    // Assert
    const failed = lines.filter((line) => line.message === 'Webhook delivery message failed; it will be received again');
    expect(failed).toEqual([expect.objectContaining({ deliveryId: delivery.id, partner_id: a.credentials.partnerId, svc_tx_id: delivery.svcTxId })]);
    const later = lines.find((line) => line.deliveryId === unknownId);
    expect(later).toBeDefined();
    expect(later).not.toHaveProperty('partner_id');
    expect(later).not.toHaveProperty('svc_tx_id');
  });
});
