/**
 * What an operator sees of a payment: the log lines of a transaction carry the
 * request id, the partner id and the `svc_tx_id` as keys, and the use cases count the business metrics the
 * alarms and dashboards read (TransactionsCreated, TransactionsSucceeded). The metrics themselves are embedded
 * metric format lines flushed in AWS only (`test/unit/http/metrics.test.ts`); here the counts are recorded by a
 * stand-in `countMetric`, everything else of `lib/observability.ts` being the real one.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { TestApi as Api } from '../../support/api';

// Info lines are what is asserted on: load the service's modules at that level.
const previousLevel = process.env.LOG_LEVEL;
process.env.LOG_LEVEL = 'INFO';
const counted: string[] = [];
const observability = await import('../../../lib/observability');
jest.unstable_mockModule('../../../lib/observability', () => ({
  ...observability,
  countMetric: (name: string, count = 1) => {
    for (let i = 0; i < count; i++) counted.push(name);
  },
}));
const { TestApi } = await import('../../support/api');
const { eventBody, intentObject, pendingTransaction, signed } = await import('../../support/processor-events');
process.env.LOG_LEVEL = previousLevel;

let api: Api;
beforeAll(async () => {
  api = await TestApi.start();
});
afterAll(() => api.close());

/** Runs `act` with stdout captured: the JSON log lines it printed. */
async function logLinesOf(act: () => Promise<void>): Promise<Array<Record<string, unknown>>> {
  const lines: string[] = [];
  const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    await act();
  } finally {
    write.mockRestore();
  }
  return lines
    .flatMap((chunk) => chunk.split('\n'))
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('observability of a payment', () => {
  it('logs a created transaction with its request id, partner id and svc_tx_id, and counts TransactionsCreated', async () => {
    const partner = await api.createPartner();
    const clientId = await api.createClient(partner);
    counted.length = 0;

    let response: Awaited<ReturnType<typeof api.signed>> | undefined;
    const lines = await logLinesOf(async () => {
      response = await api.signed(partner, '/transactions/initialize', {
        partner_id: partner.partnerId,
        client_id: clientId,
        amount: 1500,
        currency: 'JPY',
        partner_reference: `order-${randomUUID()}`,
      });
    });

    expect(response?.status).toBe(201);
    const svcTxId = response?.body.svc_tx_id as string;
    expect(lines).toContainEqual(
      expect.objectContaining({
        message: 'Transaction created',
        request_id: expect.any(String),
        partner_id: partner.partnerId,
        client_id: clientId,
        svc_tx_id: svcTxId,
      }),
    );
    expect(counted.filter((name) => name === 'TransactionsCreated')).toHaveLength(1);
  });

  it('keeps each request’s keys on its own lines when requests of two partners run at once in one process', async () => {
    const partners = await Promise.all([api.createPartner(), api.createPartner()]);
    const clients = await Promise.all(partners.map((partner) => api.createClient(partner)));
    const initialize = (i: number) =>
      api.signed(partners[i]!, '/transactions/initialize', {
        partner_id: partners[i]!.partnerId,
        client_id: clients[i],
        amount: 700,
        currency: 'USD',
        partner_reference: `concurrent-${randomUUID()}`,
      });

    const owners = new Map<string, string>();
    const lines = await logLinesOf(async () => {
      const responses = await Promise.all(Array.from({ length: 20 }, (_, n) => initialize(n % 2)));
      responses.forEach((response, n) => owners.set(response.body.svc_tx_id as string, partners[n % 2]!.partnerId));
    });

    const created = lines.filter((line) => line.message === 'Transaction created');
    expect(created).toHaveLength(20);
    for (const line of created) expect(line.partner_id).toBe(owners.get(line.svc_tx_id as string));
    expect(new Set(created.map((line) => line.request_id)).size).toBe(20);
  });

  it('logs a processor event that moved a transaction with its svc_tx_id and partner id, and counts TransactionsSucceeded', async () => {
    const partner = await api.createPartner();
    const clientId = await api.createClient(partner);
    const transaction = await pendingTransaction(partner.partnerId, clientId, { amountMinor: 2500, currency: 'EUR' });
    const body = eventBody('payment_intent.succeeded', intentObject(transaction.processorPaymentIntentId ?? '', 2500, 'eur'));
    counted.length = 0;

    let status: number | undefined;
    const lines = await logLinesOf(async () => {
      ({ status } = await api.request('POST', '/webhooks/processor', { headers: { 'content-type': 'application/json', 'processor-signature': signed(body) }, body }));
    });

    expect(status).toBe(200);
    expect(lines).toContainEqual(
      expect.objectContaining({
        message: 'Transaction moved by processor event',
        request_id: expect.any(String),
        partner_id: partner.partnerId,
        svc_tx_id: transaction.svcTxId,
        to: 'succeeded',
      }),
    );
    expect(counted.filter((name) => name === 'TransactionsSucceeded')).toHaveLength(1);
    expect(counted.filter((name) => name === 'TransactionsCreated')).toHaveLength(0);
  });
});
