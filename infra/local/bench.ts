/**
 * `npm run bench`: the figures the issues name, measured on this machine against `npm start` itself.
 *
 *   1. start-up: `npm start -- --in-memory` until GET /api/v1/health answers 200 (issue: within 60 s), and
 *      Ctrl-C (SIGINT to the process group) until every process has exited; several runs.
 *   2. request latency through the whole local stack (HTTP -> API Gateway event -> middy chain -> DynamoDB
 *      Local, and the sandbox processor for checkout): health, a signed POST /clients, a checkout-intent.
 *   3. 10 concurrent identical POST /clients with one idempotency key: how many clients, which answers.
 *   4. processor event -> partner webhook received (issue 8: p95 <= 1 s locally with the default settings):
 *      payments confirmed one after another at the sandbox processor with the stripe SDK, each timed from the
 *      moment the sandbox starts posting its signed `payment_intent.succeeded` (its own record, GET
 *      /sandbox/events) to the moment a partner endpoint on 127.0.0.1 has the webhook, through the processor
 *      webhook, the table's stream, the local queue and the consumer of `npm start`.
 *   5. settlement run (issue 9): 10,000 eligible transactions, then the same with 100,000 settled ones in the
 *      table, each in a fresh service (`bench-settlement.ts`). `npm run bench -- settlement` runs this section alone.
 *
 * Local only (loopback), bounded in count and time; it starts and stops its own service.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueLocalAdminToken } from '../../lib/auth/admin-token';
import Stripe from 'stripe';
import { loadConfig } from '../../lib/config';
import { benchSettlement } from './bench-settlement';

const STARTUP_RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 3);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 100);
/** Payments timed from processor event to partner webhook (at least 50, so p95 is not the maximum of a handful). */
const WEBHOOK_PAYMENTS = Math.max(50, Number(process.env.BENCH_WEBHOOK_PAYMENTS ?? 50));
/** `npm run bench -- settlement`: section 5 only; no argument: every section. */
const ONLY = process.argv[2];
if (ONLY !== undefined && ONLY !== 'settlement') throw new Error(`usage: npm run bench [-- settlement], not ${ONLY}`);

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Service {
  child: ChildProcess;
  baseUrl: string;
  startupMs: number;
  env: Record<string, string>;
}

async function startService(dataDir: string): Promise<Service> {
  const env = {
    PORT: String(await freePort()),
    DYNAMODB_LOCAL_PORT: String(await freePort()),
    PROCESSOR_SANDBOX_PORT: String(await freePort()),
    WEBHOOK_QUEUE_PORT: String(await freePort()),
    RAILS_SANDBOX_PORT: String(await freePort()),
    LOCAL_DATA_DIR: dataDir,
    LOG_LEVEL: 'WARN',
  };
  const started = performance.now();
  const child = spawn('npm', ['start', '--', '--in-memory'], { env: { ...process.env, ...env }, stdio: 'ignore', detached: true });
  const baseUrl = `http://127.0.0.1:${env.PORT}/api/v1`;
  const deadline = started + 120_000;
  while (performance.now() < deadline) {
    try {
      const response = await fetch(`${baseUrl}/health`);
      if (response.status === 200) return { child, baseUrl, startupMs: performance.now() - started, env };
    } catch {
      // not listening yet
    }
    await sleep(50);
  }
  process.kill(-(child.pid ?? 0), 'SIGKILL');
  throw new Error('the service did not become healthy within 120 s');
}

/** Ctrl-C as a terminal sends it: SIGINT to the whole process group. Resolves with the time to exit. */
async function stopService(service: Service): Promise<number> {
  const started = performance.now();
  const closed = new Promise<void>((resolve) => service.child.once('close', () => resolve()));
  process.kill(-(service.child.pid ?? 0), 'SIGINT');
  await closed;
  // The process group is empty once every member has exited.
  while (isGroupAlive(service.child.pid ?? 0)) await sleep(20);
  return performance.now() - started;
}

function isGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A partner's webhook endpoint on 127.0.0.1: answers 200 and notes when each webhook arrived (its whole body
 * read), by the body's `svc_tx_id`.
 */
async function startWebhookReceiver() {
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

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;

function summarise(name: string, samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const total = samples.reduce((sum, value) => sum + value, 0);
  return {
    name,
    n: samples.length,
    p50_ms: round(percentile(sorted, 50)),
    p95_ms: round(percentile(sorted, 95)),
    max_ms: round(sorted.at(-1) ?? NaN),
    mean_ms: round(total / samples.length),
  };
}

const round = (value: number) => Math.round(value * 10) / 10;

async function timed<T>(samples: number[], action: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await action();
  samples.push(performance.now() - started);
  return result;
}

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), 'partner-payments-bench-'));
  const config = loadConfig({ LOCAL_DATA_DIR: dataDir });
  // 5. settlement run, each scenario in its own fresh service
  const settlement = () => benchSettlement({ startService: () => startService(dataDir), stopService, adminToken: () => issueLocalAdminToken(config) });
  try {
    if (ONLY === 'settlement') {
      await settlement();
      return;
    }
    // 1. start-up and shutdown
    const startups: number[] = [];
    const shutdowns: number[] = [];
    for (let run = 0; run < STARTUP_RUNS - 1; run++) {
      const service = await startService(dataDir);
      startups.push(service.startupMs);
      shutdowns.push(await stopService(service));
    }
    const service = await startService(dataDir);
    startups.push(service.startupMs);

    try {
      // 2. latency through the whole stack
      const token = await issueLocalAdminToken(config);
      const admin = (path: string, body: unknown) =>
        fetch(`${service.baseUrl}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: JSON.stringify(body) }).then(
          (response) => response.json() as Promise<Record<string, string>>,
        );
      const partner = await admin('/admin/partners', { name: 'Bench Pay', service_fee_percentage: 1, kyc_status: 'approved', rate_limit_per_minute: 1_000_000 });
      const key = await admin(`/admin/partners/${partner.partner_id}/api-keys`, { scope: 'partner' });
      const signed = (path: string, body: unknown, idempotencyKey = randomUUID()) => {
        const raw = JSON.stringify(body);
        return fetch(`${service.baseUrl}${path}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-api-key': key.api_key ?? '',
            'x-svc-hmac': createHmac('sha256', key.hmac_secret ?? '').update(raw).digest('hex'),
            'idempotency-key': idempotencyKey,
          },
          body: raw,
        });
      };

      const health: number[] = [];
      for (let i = 0; i < REQUESTS; i++) await timed(health, () => fetch(`${service.baseUrl}/health`).then((response) => response.text()));
      const clients: number[] = [];
      for (let i = 0; i < REQUESTS; i++) {
        const response = await timed(clients, () => signed('/clients', { client_id: `bench-${i}-${randomUUID().slice(0, 6)}`, legal_name: 'Bench Ltd' }));
        if (response.status !== 201) throw new Error(`POST /clients answered ${response.status}`);
      }
      const merchant = `bench-merchant-${randomUUID().slice(0, 6)}`;
      await signed('/clients', { client_id: merchant, legal_name: 'Bench Merchant' });
      const checkouts: number[] = [];
      for (let i = 0; i < REQUESTS; i++) {
        const response = await timed(checkouts, () =>
          signed('/transactions/checkout-intent', {
            partner_id: partner.partner_id,
            client_id: merchant,
            amount: 10 + i / 100,
            currency: 'USD',
            email: 'buyer@example.com',
            partner_reference: `bench-${i}`,
          }),
        );
        if (response.status !== 201) throw new Error(`checkout-intent answered ${response.status}`);
      }

      // 3. 10 concurrent identical requests under one idempotency key
      const body = { client_id: `bench-concurrent-${randomUUID().slice(0, 6)}`, legal_name: 'Concurrent Ltd' };
      const idempotencyKey = randomUUID();
      const answers = await Promise.all(
        Array.from({ length: 10 }, async () => {
          const response = await signed('/clients', body, idempotencyKey);
          const json = (await response.json()) as { idempotentReplay?: boolean; code?: string };
          return response.status === 201 ? (json.idempotentReplay ? '201 replay' : '201 created') : `${response.status} ${json.code}`;
        }),
      );
      const list = (await (
        await fetch(`${service.baseUrl}/clients?limit=200`, { headers: { 'x-api-key': key.api_key ?? '' } })
      ).json()) as { items: Array<{ client_id: string }> };
      const tally = answers.reduce<Record<string, number>>((counts, answer) => ({ ...counts, [answer]: (counts[answer] ?? 0) + 1 }), {});

      // 4. processor event -> partner webhook received
      const receiver = await startWebhookReceiver();
      const webhookSamples: number[] = [];
      let webhooksReceived = 0;
      try {
        const endpoint = await admin(`/admin/partners/${partner.partner_id}/webhook-endpoints`, { name: 'Bench', url: receiver.url, events: ['transaction_succeeded'] });
        if (endpoint.id === undefined) throw new Error(`webhook endpoint not created: ${JSON.stringify(endpoint)}`);
        const processorPort = Number(service.env.PROCESSOR_SANDBOX_PORT);
        const stripe = new Stripe(config.PROCESSOR_SECRET_KEY ?? 'sk_test_sandbox_local', { host: '127.0.0.1', port: processorPort, protocol: 'http' });
        const arrivedAt = new Map<string, number>();
        const intents = new Map<string, string>();
        for (let i = 0; i < WEBHOOK_PAYMENTS; i++) {
          const response = await signed('/transactions/checkout-intent', {
            partner_id: partner.partner_id,
            client_id: merchant,
            amount: 20 + i / 100,
            currency: 'USD',
            email: 'buyer@example.com',
            partner_reference: `bench-webhook-${i}`,
          });
          const checkout = (await response.json()) as { svc_tx_id: string; processor_payment_intent_id: string };
          if (response.status !== 201) throw new Error(`checkout-intent answered ${response.status}`);
          const arrival = receiver.arrival(checkout.svc_tx_id, 15_000);
          await stripe.paymentIntents.confirm(checkout.processor_payment_intent_id, { payment_method: 'pm_card_visa' });
          arrivedAt.set(checkout.svc_tx_id, await arrival);
          intents.set(checkout.processor_payment_intent_id, checkout.svc_tx_id);
        }
        // When the sandbox started posting each payment_intent.succeeded (its own delivery record).
        const events = (await (await fetch(`http://127.0.0.1:${processorPort}/sandbox/events`)).json()) as {
          data: Array<{ event: { type: string; data: { object: { id: string } } }; attempts: Array<{ at: string }> }>;
        };
        for (const { event, attempts } of events.data) {
          const svcTxId = event.type === 'payment_intent.succeeded' ? intents.get(event.data.object.id) : undefined;
          const received = svcTxId === undefined ? undefined : arrivedAt.get(svcTxId);
          const posted = attempts[0]?.at;
          if (received !== undefined && posted !== undefined) webhookSamples.push(received - Date.parse(posted));
        }
        if (webhookSamples.length !== WEBHOOK_PAYMENTS) throw new Error(`timed ${webhookSamples.length} of ${WEBHOOK_PAYMENTS} payments`);
        await sleep(1_000); // a duplicate would have arrived by now
        webhooksReceived = [...receiver.arrivals.values()].reduce((sum, times) => sum + times.length, 0);
      } finally {
        await receiver.close();
      }
      const webhook = summarise('processor event -> partner webhook received', webhookSamples);

      console.log('\nStart-up: `npm start -- --in-memory` until GET /api/v1/health = 200');
      console.table([summarise('start-up to healthy', startups)]);
      console.log('Ctrl-C (SIGINT to the process group) until every process exited');
      console.table([summarise('shutdown', shutdowns)]);
      console.log(`Sequential request latency through the local stack (${REQUESTS} each)`);
      console.table([summarise('GET /health', health), summarise('POST /clients (signed)', clients), summarise('POST /transactions/checkout-intent', checkouts)]);
      console.log('10 concurrent identical POST /clients, one idempotency key');
      console.table([{ ...tally, clients_created: list.items.filter((client) => client.client_id === body.client_id).length }]);
      console.log(`Processor event (the sandbox starts posting payment_intent.succeeded) -> partner webhook received, ${WEBHOOK_PAYMENTS} payments one after another`);
      console.table([{ name: webhook.name, n: webhook.n, webhook_p50_ms: webhook.p50_ms, webhook_p95_ms: webhook.p95_ms, max_ms: webhook.max_ms, mean_ms: webhook.mean_ms, webhooks_received: webhooksReceived }]);
      console.log(JSON.stringify({ webhook_n: webhook.n, webhook_p50_ms: webhook.p50_ms, webhook_p95_ms: webhook.p95_ms, webhook_max_ms: webhook.max_ms, webhooks_received: webhooksReceived }));
    } finally {
      shutdowns.push(await stopService(service));
    }
    await settlement();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
