/**
 * The capacity model's measurement: a payment's life driven through `npm start` (in memory, its own ports) with
 * `DYNAMODB_CAPACITY_LOG` set, so every DynamoDB call of every function logs the units DynamoDB Local consumed and
 * the partitions it touched (`infra/local/lambda/capacity-log.ts`). One partner, one merchant, two webhook endpoints
 * subscribed to every event, and PAYMENTS payments, one step of their life at a time:
 *
 *   checkout          signed POST /transactions/checkout-intent
 *   succeeded         each confirmed at the sandbox processor: the processor webhook (payment_intent.succeeded)
 *                     writes the payment's move, its sale and two deliveries; then the delivery pipeline sends them
 *   partial refund    a refund of part of REFUNDED of them (charge.refunded), and its deliveries
 *   dispute           a dispute on DISPUTED others (charge.dispute.created), and its deliveries
 *   settlement run    POST /settlements/run, over all of them
 *   payout            POST /settlements/pay, each batch the run made
 *   reads             the partner's reads: a transactions page, one transaction, balances, settlements, clients
 *
 * Before them, two payments warm the endpoints up, uncounted (a new endpoint is probed first, and deliveries that come
 * meanwhile are parked: not the steady state the model is of). A step ends when its webhooks have all arrived and the
 * log has been quiet a second; each call is counted to the step it ran in, by its function. The outbox sweep, which runs on a timer, is counted per sweep.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueLocalAdminToken } from '../../lib/auth/admin-token';
import { loadConfig } from '../../lib/config';
import { keys } from '../../lib/store/keys';
import type { CapacityRecord } from '../../infra/local/lambda/capacity-log';
import { type ServiceProcess, sleep, startService, stopService } from '../../infra/local/runtime/service-process';
import { adminPost, checkoutBody, createBenchClient, createBenchPartner } from '../api';
import { processorOf, startWebhookReceiver } from '../webhooks';
import { type MeasuredOperation, type MeasuredTouch, OPERATIONS } from './model';

const PAYMENTS = Number(process.env.BENCH_CAPACITY_PAYMENTS ?? 40);
const REFUNDED = Math.max(1, Math.floor(PAYMENTS / 4));
const DISPUTED = Math.max(1, Math.floor(PAYMENTS / 4));
const READS = 10;
const ENDPOINTS = 2;
const EVENTS = ['transaction_succeeded', 'transaction_failed', 'transaction_abandoned', 'transaction_refunded', 'transaction_chargeback', 'transaction_partially_refunded', 'transaction_dispute_closed'];

/** Which function's calls in which step make which operation, and how many times it ran. */
interface Step {
  name: string;
  /** function name → operation name */
  operations: Record<string, string>;
  instances: number;
  /** The settlement batches its instances made or paid (the settlement run's and the payout's). */
  batches?: number;
  from: number;
  to: number;
}

export async function measureCapacity(progress: (line: string) => void): Promise<{ operations: MeasuredOperation[]; payments: number; unknownFunctions: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-capacity-'));
  const logFile = join(dir, 'capacity.jsonl');
  const serviceLog = join(dir, 'service.log');
  const service = await startService(dir, () => ({ DYNAMODB_CAPACITY_LOG: logFile, SETTLEMENT_CUTOFF: 'now', RECONCILIATION_SCHEDULE: 'off' }), { logFile: serviceLog });
  const receiver = await startWebhookReceiver();
  try {
    const steps = await drive(service, receiver, progress);
    const records = readFileSync(logFile, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as CapacityRecord);
    const unreadable = records.find((record) => record.unreadable !== undefined);
    if (unreadable !== undefined) throw new Error(`capacity: the log could not read a ${unreadable.command} of ${unreadable.fn}: ${unreadable.unreadable}`);
    return { ...attribute(records, steps), payments: PAYMENTS };
  } catch (error) {
    progress(`The service's log ends:\n${readFileSync(serviceLog, 'utf8').split('\n').slice(-40).join('\n')}`);
    throw error;
  } finally {
    await receiver.close();
    await stopService(service);
    // BENCH_CAPACITY_KEEP_LOG: keep the raw log (one JSON line per DynamoDB call) for a closer look.
    if (process.env.BENCH_CAPACITY_KEEP_LOG === undefined) rmSync(dir, { recursive: true, force: true });
    else progress(`  the capacity log is kept: ${logFile}`);
  }
}

type Receiver = Awaited<ReturnType<typeof startWebhookReceiver>>;

async function drive(service: ServiceProcess, receiver: Receiver, progress: (line: string) => void): Promise<Step[]> {
  const config = loadConfig({ ...process.env, ...service.env });
  const token = await issueLocalAdminToken(config);
  const partner = await createBenchPartner(service, token, 'Capacity Partner');
  const { clientId } = await createBenchClient(partner, 'capacity-merchant');
  for (let i = 0; i < ENDPOINTS; i++) {
    await adminPost(service, token, `/admin/partners/${partner.partnerId}/webhook-endpoints`, { name: `Capacity ${i}`, url: receiver.url, events: EVENTS });
  }
  const { stripe, port, key } = processorOf(service);
  const arrived = () => [...receiver.arrivals.values()].reduce((sum, times) => sum + times.length, 0);
  const steps: Step[] = [];
  /** Runs `act`, waits for `webhooks` more arrivals and a quiet log, and notes the step's window. */
  const step = async (name: string, operations: Record<string, string>, instances: number, webhooks: number, act: () => Promise<void>) => {
    progress(`  ${name}`);
    const expected = arrived() + webhooks;
    const from = Date.now();
    await act();
    const deadline = Date.now() + 120_000;
    while (arrived() < expected) {
      if (Date.now() > deadline) throw new Error(`capacity: ${name}: ${expected - arrived()} of ${webhooks} webhooks never arrived`);
      await sleep(50);
    }
    await quiet(service);
    steps.push({ name, operations, instances, from, to: Date.now() });
  };
  // Warm-up, not counted: the model is of a service in its steady state, whose endpoints have answered before. A new
  // endpoint is probed first (docs/webhooks.md), and deliveries that come meanwhile are parked and woken.
  progress('  warm-up (not counted): 2 payments to each endpoint');
  const warmed = arrived() + 2 * ENDPOINTS;
  for (let i = 0; i < 2; i++) {
    const response = await partner.signed('/transactions/checkout-intent', checkoutBody(partner.partnerId, clientId, `capacity-warm-${i}-${randomUUID().slice(0, 8)}`, 25));
    const body = (await response.json()) as { processor_payment_intent_id: string };
    await stripe.paymentIntents.confirm(body.processor_payment_intent_id, { payment_method: 'pm_card_visa' });
  }
  while (arrived() < warmed) await sleep(50);
  // past the breaker's second close wake, for consumers whose one-second cache still said probing
  await sleep(3_000);
  await quiet(service);

  const payments: Array<{ svcTxId: string; intentId: string }> = [];
  await step('checkout', { 'transactions-checkout-intent': OPERATIONS.checkout }, PAYMENTS, 0, async () => {
    for (let i = 0; i < PAYMENTS; i++) {
      const response = await partner.signed('/transactions/checkout-intent', checkoutBody(partner.partnerId, clientId, `capacity-${i}-${randomUUID().slice(0, 8)}`, 25));
      const body = (await response.json()) as { svc_tx_id: string; processor_payment_intent_id: string };
      if (response.status !== 201) throw new Error(`capacity: checkout-intent answered ${response.status}: ${JSON.stringify(body)}`);
      payments.push({ svcTxId: body.svc_tx_id, intentId: body.processor_payment_intent_id });
    }
  });
  await step('succeeded', { 'processor-webhook': OPERATIONS.succeeded, 'webhook-delivery': OPERATIONS.succeededDeliveries }, PAYMENTS, PAYMENTS * ENDPOINTS, async () => {
    for (const payment of payments) await stripe.paymentIntents.confirm(payment.intentId, { payment_method: 'pm_card_visa' });
  });
  const refunded = payments.slice(0, REFUNDED);
  await step('partial refund', { 'processor-webhook': OPERATIONS.refund, 'webhook-delivery': OPERATIONS.refundDeliveries }, REFUNDED, REFUNDED * ENDPOINTS, async () => {
    for (const payment of refunded) await stripe.refunds.create({ payment_intent: payment.intentId, amount: 500 });
  });
  const disputed = payments.slice(REFUNDED, REFUNDED + DISPUTED);
  await step('dispute', { 'processor-webhook': OPERATIONS.dispute, 'webhook-delivery': OPERATIONS.disputeDeliveries }, DISPUTED, DISPUTED * ENDPOINTS, async () => {
    for (const payment of disputed) {
      const response = await fetch(`http://127.0.0.1:${port}/sandbox/payment_intents/${payment.intentId}/dispute`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
      if (response.status !== 200) throw new Error(`capacity: the sandbox dispute answered ${response.status}`);
    }
  });
  const batchIds: string[] = [];
  await step('settlement run', { 'settlements-run': OPERATIONS.settlementRun }, PAYMENTS, 0, async () => {
    const response = await fetch(`${service.baseUrl}/settlements/run?partner_id=${partner.partnerId}`, { method: 'POST', headers: { 'x-api-key': partner.apiKey } });
    const body = (await response.json()) as { batches?: Array<{ id: string }> };
    if (response.status !== 200 && response.status !== 201) throw new Error(`capacity: settlements/run answered ${response.status}: ${JSON.stringify(body)}`);
    batchIds.push(...(body.batches ?? []).map((batch) => batch.id));
    if (batchIds.length === 0) throw new Error('capacity: the settlement run made no batch');
  });
  (steps.at(-1) as Step).batches = batchIds.length;
  await step('payout', { 'settlements-pay': OPERATIONS.payout }, PAYMENTS, 0, async () => {
    for (const id of batchIds) {
      const response = await fetch(`${service.baseUrl}/settlements/pay`, {
        method: 'POST',
        headers: { 'x-api-key': partner.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ settlement_batch_id: id }),
      });
      if (response.status !== 200) throw new Error(`capacity: settlements/pay answered ${response.status}: ${await response.text()}`);
    }
  });
  (steps.at(-1) as Step).batches = batchIds.length;
  const get = async (path: string) => {
    const response = await fetch(`${service.baseUrl}${path}`, { headers: { 'x-api-key': partner.apiKey } });
    if (response.status !== 200) throw new Error(`capacity: GET ${path} answered ${response.status}`);
    await response.arrayBuffer();
  };
  await step(
    'reads',
    {
      'transactions-list': OPERATIONS.transactionsPage,
      'transactions-get': OPERATIONS.transactionRead,
      'balances-list': OPERATIONS.balances,
      'settlements-list': OPERATIONS.settlementsPage,
      'clients-list': OPERATIONS.clientsPage,
    },
    READS,
    0,
    async () => {
      for (let i = 0; i < READS; i++) {
        await get('/transactions?limit=50');
        await get(`/transactions/${payments[i % payments.length]!.svcTxId}`);
        await get('/balances');
        await get('/settlements');
        await get('/clients');
      }
    },
  );
  return steps;
}

/** Waits until the capacity log has not grown for a second (the service's steps all done). */
async function quiet(service: ServiceProcess) {
  const file = service.env.DYNAMODB_CAPACITY_LOG!;
  const size = () => {
    try {
      return readFileSync(file).length;
    } catch {
      return 0;
    }
  };
  let last = size();
  for (;;) {
    await sleep(1_000);
    const now = size();
    if (now === last) return;
    last = now;
  }
}

/** The log's calls, counted to their steps' operations; the sweep per sweep. Functions no step names are reported. */
function attribute(records: CapacityRecord[], steps: Step[]) {
  const operations = new Map<string, { instances: number; batches: number | undefined; touches: Map<string, MeasuredTouch> }>();
  const unknown = new Set<string>();
  const add = (name: string, instances: number, record: CapacityRecord, batches?: number) => {
    const operation = operations.get(name) ?? { instances, batches, touches: new Map<string, MeasuredTouch>() };
    for (const touch of record.touches) {
      const id = `${touch.on} ${touch.partition} ${touch.access}`;
      const sum = operation.touches.get(id) ?? { ...touch, units: 0 };
      sum.units += touch.units;
      operation.touches.set(id, sum);
    }
    operations.set(name, operation);
  };
  // A sweep queries every partition of the outbox, the first shard among them (more than once only if it pages).
  const firstShard = keys.outboxPartition(0);
  const sweeps = records.filter((record) => record.fn === 'outbox-sweep' && record.command === 'QueryCommand' && record.touches.some((touch) => touch.partition === firstShard)).length;
  const start = steps[0]?.from ?? 0;
  for (const record of records) {
    // Outside any function (the runtime's own setup), or before the first step (the partner and its endpoints made).
    if (record.fn === null || record.at < start) continue;
    if (record.fn === 'outbox-sweep') {
      add(OPERATIONS.outboxSweep, Math.max(1, sweeps), record);
      continue;
    }
    const within = steps.find((candidate) => record.at >= candidate.from && record.at <= candidate.to);
    const name = within?.operations[record.fn];
    if (within === undefined || name === undefined) {
      unknown.add(`${record.fn}${within === undefined ? ' (outside the steps)' : ` (in ${within.name})`}`);
      continue;
    }
    add(name, within.instances, record, within.batches);
  }
  return {
    operations: [...operations].map(([name, { instances, batches, touches }]) => ({ name, instances, ...(batches === undefined ? {} : { batches }), touches: [...touches.values()] })),
    unknownFunctions: [...unknown],
  };
}
