/**
 * `npm start` delivers partner webhooks (decisions.md §1): a payment confirmed at the sandbox processor reaches a
 * partner's endpoint, signed, through the table's stream, the local queue and the consumer; and a delivery
 * written by a process that was killed before anything enqueued it is delivered, once, when the service
 * starts again ("a process killed between the write and the enqueue still delivers").
 */
import { describe, expect, it } from '@jest/globals';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import Stripe from 'stripe';
import { startDynamoDbLocal } from '../../../infra/local/runtime/dynamodb-local';
import { newId } from '../../../lib/domain/ids';
import { putNewDelivery } from '../../../lib/store/deliveries';
import { pendingDelivery } from '../../support/deliveries';
import { freePort } from '../../support/ports';
import { type RunningService, serviceClient, startService, waitFor } from '../../support/npm-start';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** A partner's webhook endpoint: records every request and answers 200. */
async function startPartnerEndpoint() {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/partner-webhooks`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())).finally(() => server.closeAllConnections()),
  };
}

const hexSignature = (secret: string, body: string) => createHmac('sha256', secret).update(body).digest('hex');

describe('npm start, partner webhooks', () => {
  it('delivers a confirmed payment’s webhook, and after a kill between the write and the enqueue, the written delivery exactly once', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'npm-start-webhooks-'));
    const endpoint = await startPartnerEndpoint();
    let service: RunningService | undefined;
    let restarted: RunningService | undefined;
    try {
      // Arrange: a service keeping its data on disk; a partner with a client and an endpoint for succeeded payments
      service = await startService({ env: { LOCAL_DATA_DIR: dataDir } });
      const api = serviceClient(service);
      const partner = await api.createPartnerWithClient();
      const created = await api.admin('POST', `/admin/partners/${partner.partnerId}/webhook-endpoints`, {
        name: 'orders',
        url: endpoint.url,
        events: ['transaction_succeeded'],
      });
      expect(created.status).toBe(201);
      const secret = created.body.secret as string;

      // Act: a checkout, confirmed at the sandbox processor with the card that succeeds
      const checkout = await api.signed(partner, '/transactions/checkout-intent', {
        partner_id: partner.partnerId,
        client_id: partner.clientId,
        amount: 12.34,
        currency: 'EUR',
        email: 'buyer@example.com',
        partner_reference: `order-${Date.now()}`,
      });
      expect(checkout.status).toBe(201);
      const stripe = new Stripe('sk_test_sandbox_local', { host: '127.0.0.1', port: service.processorPort, protocol: 'http' });
      await stripe.paymentIntents.confirm(checkout.body.processor_payment_intent_id as string, { payment_method: 'pm_card_visa' });

      // Assert: one signed webhook for it
      const first = await waitFor(async () => endpoint.received[0], 15_000, 'the partner webhook');
      expect(JSON.parse(first.body)).toMatchObject({ event: 'transaction_succeeded', svc_tx_id: checkout.body.svc_tx_id, status: 'succeeded' });
      expect(first.headers['x-svc-signature']).toBe(hexSignature(secret, first.body));

      // Arrange: the process dies (SIGKILL, Java too). Then, as if it had died right after its DynamoDB write,
      // the table gets a pending delivery that nothing has enqueued
      service.killAll();
      await service.exited;
      const dynamo = await startDynamoDbLocal({ port: await freePort(), dataDir: join(dataDir, 'dynamodb') });
      const eventId = newId.partnerEvent();
      const payload = JSON.stringify({ ...JSON.parse(first.body), partner_reference: 'written-before-the-kill' });
      const client = DynamoDBDocumentClient.from(
        new DynamoDBClient({ endpoint: dynamo.endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
      );
      try {
        const { Put } = putNewDelivery(
          pendingDelivery({ eventId, endpointId: created.body.id as string, partnerId: partner.partnerId, svcTxId: checkout.body.svc_tx_id as string, payload }),
        );
        // npm start's table (this test's configuration names the integration run's)
        await client.send(new TransactWriteCommand({ TransactItems: [{ Put: { ...Put, TableName: 'partner-payments' } }] }));
      } finally {
        client.destroy();
        await dynamo.stop();
      }

      // Act: the service starts again on the same data
      restarted = await startService({ env: { LOCAL_DATA_DIR: dataDir } });

      // Assert: the written delivery arrives, signed, long before its first relay time (2 minutes after it was written:
      // so the start-up sweep sent it), and only once
      const again = await waitFor(async () => endpoint.received.find((request) => request.headers['x-svc-event-id'] === eventId), 30_000, 'the delivery written before the kill');
      expect(again.body).toBe(payload);
      expect(again.headers['x-svc-signature']).toBe(hexSignature(secret, payload));
      // Then nothing more comes once no delivery of the partner is pending and the queue holds no message (delayed,
      // visible or being consumed): the sweep lists pending deliveries only, and the stream relay never saw a write
      // made before it started
      const restartedApi = serviceClient(restarted);
      const queueStats = `http://127.0.0.1:${restarted.webhookQueuePort}/stats`;
      await waitFor(async () => {
        const listed = await restartedApi.admin('GET', `/admin/partners/${partner.partnerId}/webhook-deliveries?limit=200`);
        const queue = (await (await fetch(queueStats)).json()) as { depth: number };
        const pending = (listed.body?.items as Array<{ status: string }> | undefined)?.some((delivery) => delivery.status === 'pending') ?? true;
        return !pending && queue.depth === 0 ? true : undefined;
      }, 10_000, 'no pending delivery and an empty queue');
      expect(endpoint.received.filter((request) => request.headers['x-svc-event-id'] === eventId)).toHaveLength(1);
      expect(endpoint.received).toHaveLength(2);
      const deadLetters = await fetch(`http://127.0.0.1:${restarted.webhookQueuePort}/dead-letters`);
      expect(await deadLetters.json()).toEqual({ items: [] });
    } finally {
      service?.killAll();
      restarted?.killAll();
      await endpoint.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000);
});
