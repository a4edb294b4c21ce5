/**
 * `npm run bench` sections 6 and 6b: processor event → partner webhook received, on a quiet service and beside a
 * noisy neighbour (decisions.md §8).
 *
 * Each payment is a checkout-intent confirmed at the sandbox processor with the stripe SDK, timed from the moment
 * the sandbox starts posting its signed `payment_intent.succeeded` (its own record, GET /sandbox/events) to the
 * moment the partner's endpoint on 127.0.0.1 has the webhook, through the processor webhook, the table's stream,
 * the local fair queue and the consumer of `npm start`.
 *
 * The noisy neighbour: partner A has 20 endpoints that never answer (they hold the connection past the 10 s
 * timeout) and 200 payments in flight (confirmed 10 at a time: 4,000 deliveries whose attempts time out, are
 * probed and deferred); partner B, the one timed, has one healthy endpoint. B's payments go one after another as
 * soon as the service has taken all of A's payment events (A's deliveries written, its endpoints being attempted)
 * and the delivery pipeline has looked at each of A's deliveries once, for at least a minute (50 payments or
 * more, `BENCH_NOISY_SECONDS`): B's
 * webhooks meet A's waiting deliveries (deferred, coming back, probed) in the queue and the consumer. How long the
 * pipeline took to take A's burst in is reported too.
 */
import { createServer as createHttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { loadConfig } from '../lib/config';
import { adminPost, checkoutBody, createBenchClient, createBenchPartner, type BenchPartner } from './api';
import type { ServiceProcess } from '../infra/local/runtime/service-process';

export const DEAD_ENDPOINTS = 20;
export const NOISY_PAYMENTS = 200;
const NOISY_CONCURRENCY = 10;
/** B's payments go on at least this long (BENCH_NOISY_SECONDS), past several of A's breakers' cool-downs. */
const NOISY_MEASURE_MS = Number(process.env.BENCH_NOISY_SECONDS ?? 60) * 1000;

/**
 * A partner's webhook endpoint on 127.0.0.1: answers 200 and notes when each webhook arrived (its whole body
 * read), by the body's `svc_tx_id`.
 */
export async function startWebhookReceiver() {
  const arrivals = new Map<string, number[]>();
  const waiters = new Map<string, (at: number) => void>();
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = Date.now();
      res.writeHead(200).end();
      let svcTxId = '';
      try {
        svcTxId = String((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { svc_tx_id?: unknown }).svc_tx_id);
      } catch {
        // not a webhook: counted under ''
      }
      arrivals.set(svcTxId, [...(arrivals.get(svcTxId) ?? []), at]);
      waiters.get(svcTxId)?.(at);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/bench-webhooks`,
    arrivals,
    /** When the webhook of `svcTxId` arrives (call before causing it). */
    arrival(svcTxId: string, timeoutMs: number): Promise<number> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no webhook for ${svcTxId} within ${timeoutMs} ms`)), timeoutMs);
        waiters.set(svcTxId, (at) => {
          clearTimeout(timer);
          waiters.delete(svcTxId);
          resolve(at);
        });
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())).finally(() => server.closeAllConnections()),
  };
}

/** Endpoints that never answer: every request is read and held open until the sender gives up. */
async function startDeadReceiver() {
  const held = new Set<ServerResponse>();
  let requests = 0;
  const server = createHttpServer((req, res) => {
    req.resume();
    requests += 1;
    held.add(res);
    res.on('close', () => held.delete(res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: (path: string) => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
    requests: () => requests,
    close: () => {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export const processorOf = (service: ServiceProcess) => {
  const config = loadConfig({ ...process.env, ...service.env });
  const port = Number(service.env.PROCESSOR_SANDBOX_PORT);
  const key = config.PROCESSOR_SECRET_KEY ?? 'sk_test_sandbox_local';
  return { port, key, stripe: new Stripe(key, { host: '127.0.0.1', port, protocol: 'http' }) };
};

/** The sandbox's record of every event it emitted, with its delivery attempts (GET /sandbox/events). */
async function sandboxEvents(service: ServiceProcess) {
  const { port, key } = processorOf(service);
  const response = await fetch(`http://127.0.0.1:${port}/sandbox/events`, { headers: { authorization: `Bearer ${key}` } });
  if (response.status !== 200) throw new Error(`GET /sandbox/events answered ${response.status}`);
  return ((await response.json()) as { data: Array<{ event: { type: string; data: { object: { id: string } } }; outcome: string; attempts: Array<{ at: string }> }> }).data;
}

async function until(what: string, timeoutMs: number, done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** The local queue's counts (GET /stats on its SQS front). */
async function queueStats(service: ServiceProcess): Promise<{ sent: number; depth: number; visible: number; inFlight: number }> {
  const response = await fetch(`http://127.0.0.1:${service.env.WEBHOOK_QUEUE_PORT}/stats`);
  if (response.status !== 200) throw new Error(`GET /stats of the local queue answered ${response.status}`);
  return (await response.json()) as { sent: number; depth: number; visible: number; inFlight: number };
}

/** A confirmed payment of `partner`'s merchant: its transaction and intent ids. */
async function confirmedPayment(service: ServiceProcess, partner: BenchPartner, merchant: string, reference: string, amount: number, beforeConfirm?: (svcTxId: string) => void) {
  const response = await partner.signed('/transactions/checkout-intent', checkoutBody(partner.partnerId, merchant, reference, amount));
  const checkout = (await response.json()) as { svc_tx_id: string; processor_payment_intent_id: string };
  if (response.status !== 201) throw new Error(`checkout-intent answered ${response.status}`);
  beforeConfirm?.(checkout.svc_tx_id);
  await processorOf(service).stripe.paymentIntents.confirm(checkout.processor_payment_intent_id, { payment_method: 'pm_card_visa' });
  return { svcTxId: checkout.svc_tx_id, intentId: checkout.processor_payment_intent_id };
}

/**
 * `count` payments of `partner`'s merchant one after another, each waiting for its webhook at `receiver`; the
 * event → webhook time of each (ms), and how many webhooks arrived (a duplicate would show).
 */
export async function timeWebhooks(
  service: ServiceProcess,
  partner: BenchPartner,
  merchant: string,
  receiver: Awaited<ReturnType<typeof startWebhookReceiver>>,
  count: number,
  label: string,
  /** Go on past `count` payments until this long has passed (ms). */
  forAtLeastMs = 0,
): Promise<number[]> {
  const arrivedAt = new Map<string, number>();
  const intents = new Map<string, string>();
  const until = Date.now() + forAtLeastMs;
  for (let i = 0; i < count || Date.now() < until; i++) {
    let arrival: Promise<number> | undefined;
    const payment = await confirmedPayment(service, partner, merchant, `bench-${label}-${i}`, (2000 + i) / 100, (svcTxId) => {
      arrival = receiver.arrival(svcTxId, 60_000);
    });
    arrivedAt.set(payment.svcTxId, await (arrival as Promise<number>));
    intents.set(payment.intentId, payment.svcTxId);
  }
  // When the sandbox started posting each payment_intent.succeeded (its own delivery record).
  const samples: number[] = [];
  for (const { event, attempts } of await sandboxEvents(service)) {
    const svcTxId = event.type === 'payment_intent.succeeded' ? intents.get(event.data.object.id) : undefined;
    const at = svcTxId === undefined ? undefined : arrivedAt.get(svcTxId);
    const posted = attempts[0]?.at;
    if (at !== undefined && posted !== undefined) samples.push(at - Date.parse(posted));
  }
  if (samples.length !== intents.size) throw new Error(`timed ${samples.length} of ${intents.size} payments (${label})`);
  return samples;
}

/**
 * Section 6b: B's event → webhook times while A is the noisy neighbour. A's 200 payments are confirmed first (10
 * at a time); B's timed payments start once A's 20 endpoints have all been attempted.
 */
export async function timeWebhooksBesideNoisyNeighbour(service: ServiceProcess, token: string, count: number, progress: (line: string) => void): Promise<{ samples: number[]; deadRequests: number; burstTakenInMs: number }> {
  const dead = await startDeadReceiver();
  const receiver = await startWebhookReceiver();
  try {
    const noisy = await createBenchPartner(service, token, 'Noisy Pay');
    const noisyMerchant = (await createBenchClient(noisy, 'noisy-merchant')).clientId;
    for (let i = 0; i < DEAD_ENDPOINTS; i++) {
      await adminPost(service, token, `/admin/partners/${noisy.partnerId}/webhook-endpoints`, { name: `Dead ${i}`, url: dead.url(`/dead-${i}`), events: ['transaction_succeeded'] });
    }
    const quiet = await createBenchPartner(service, token, 'Quiet Pay');
    const quietMerchant = (await createBenchClient(quiet, 'quiet-merchant')).clientId;
    await adminPost(service, token, `/admin/partners/${quiet.partnerId}/webhook-endpoints`, { name: 'Quiet', url: receiver.url, events: ['transaction_succeeded'] });

    const sentBefore = (await queueStats(service)).sent;
    progress(`  partner A: ${NOISY_PAYMENTS} payments, ${DEAD_ENDPOINTS} endpoints that never answer`);
    let next = 0;
    const noisyIntents = new Set<string>();
    await Promise.all(
      Array.from({ length: NOISY_CONCURRENCY }, async () => {
        while (next < NOISY_PAYMENTS) {
          const i = next++;
          noisyIntents.add((await confirmedPayment(service, noisy, noisyMerchant, `bench-noisy-${i}`, (1000 + i) / 100)).intentId);
        }
      }),
    );
    // A's payments are in flight once the service has taken each of their events (their 4,000 deliveries written)
    // and A's endpoints are being attempted: from then on, B's webhooks meet A's only in the delivery pipeline.
    await until(`A's ${NOISY_PAYMENTS} payment events taken and its endpoints attempted`, 120_000, async () => {
      const taken = (await sandboxEvents(service)).filter(
        (record) => record.event.type === 'payment_intent.succeeded' && noisyIntents.has(record.event.data.object.id) && record.outcome === 'delivered',
      ).length;
      return taken === NOISY_PAYMENTS && dead.requests() >= DEAD_ENDPOINTS;
    });
    // ... and once the delivery pipeline has taken A's burst in: every delivery relayed to the queue and looked at
    // once (probed, or deferred and parked), the consumer holding no more than A's probes. Until then B's webhooks would wait behind A's 4,000 deliveries in the
    // local table's single stream shard; that time is reported on its own.
    const burstTakenFrom = Date.now();
    await until('A’s burst taken in by the delivery pipeline', 300_000, async () => {
      const stats = await queueStats(service);
      return stats.sent >= sentBefore + NOISY_PAYMENTS * DEAD_ENDPOINTS && stats.visible === 0 && stats.inFlight <= DEAD_ENDPOINTS;
    });
    const burstTakenInMs = Date.now() - burstTakenFrom;
    progress(`  partner B: ${count} payments one after another, timed`);
    // For a minute at least: A's waiting deliveries come back at each cool-down's end, and B must meet several.
    const samples = await timeWebhooks(service, quiet, quietMerchant, receiver, count, 'beside-noisy', NOISY_MEASURE_MS);
    if (process.env.BENCH_DEBUG !== undefined) progress(`  B samples in order: ${samples.map(Math.round).join(' ')}`);
    return { samples, deadRequests: dead.requests(), burstTakenInMs };
  } finally {
    await receiver.close();
    await dead.close();
  }
}
