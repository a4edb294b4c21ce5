/**
 * `npm run bench`: the figures the issues name, measured on this machine against `npm start` itself.
 *
 *   1. start-up: `npm start -- --in-memory` until GET /api/v1/health answers 200 (issue: within 60 s), and
 *      Ctrl-C (SIGINT to the process group) until every process has exited; several runs.
 *   2. request latency through the whole local stack (HTTP -> API Gateway event -> middy chain -> DynamoDB
 *      Local, and the sandbox processor for checkout): health, a signed POST /clients, a checkout-intent.
 *   3. 10 concurrent identical POST /clients with one idempotency key: how many clients, which answers.
 *
 * Local only (loopback), bounded in count and time; it starts and stops its own service.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueLocalAdminToken } from '../../lib/auth/admin-token';
import { loadConfig } from '../../lib/config';

const STARTUP_RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 3);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 100);

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
  try {
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

      console.log('\nStart-up: `npm start -- --in-memory` until GET /api/v1/health = 200');
      console.table([summarise('start-up to healthy', startups)]);
      console.log('Ctrl-C (SIGINT to the process group) until every process exited');
      console.table([summarise('shutdown', shutdowns)]);
      console.log(`Sequential request latency through the local stack (${REQUESTS} each)`);
      console.table([summarise('GET /health', health), summarise('POST /clients (signed)', clients), summarise('POST /transactions/checkout-intent', checkouts)]);
      console.log('10 concurrent identical POST /clients, one idempotency key');
      console.table([{ ...tally, clients_created: list.items.filter((client) => client.client_id === body.client_id).length }]);
    } finally {
      shutdowns.push(await stopService(service));
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
