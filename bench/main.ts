/**
 * `npm run bench`: the figures the issues name, measured on this machine against `npm start` itself.
 *
 *   1. start-up: `npm start -- --in-memory` until GET /api/v1/health answers 200 (issue: within 60 s), and
 *      Ctrl-C (SIGINT to the process group) until every process has exited; several runs.
 *   2. calls per request (`calls.ts`): the DynamoDB calls and processor requests of each partner
 *      mutation, in a service whose processor calls go through a counting proxy.
 *   3. request latency through the whole local stack (HTTP -> API Gateway event -> middy chain -> DynamoDB
 *      Local, and the sandbox processor for checkout): health, a signed POST /clients, a checkout-intent.
 *   4. 10 concurrent identical POST /clients with one idempotency key: how many clients, which answers.
 *   5. checkout throughput (`checkout.ts`): DynamoDB Local's own rate for the calls one checkout
 *      makes (a bare SDK loop: the DB bound), then checkout-intent over HTTP (autocannon), both at 16 in flight.
 *   6. processor event -> partner webhook received (p95 <= 1 s locally with the default settings):
 *      payments confirmed one after another at the sandbox processor with the stripe SDK, each timed from the
 *      moment the sandbox starts posting its signed `payment_intent.succeeded` (its own record, GET
 *      /sandbox/events) to the moment a partner endpoint on 127.0.0.1 has the webhook, through the processor
 *      webhook, the table's stream, the local queue and the consumer of `npm start`. 6b: the same for another
 *      partner while a noisy neighbour has 20 endpoints that never answer and 200 payments in flight
 *      (p95 <= 1 s and <= 2x the quiet p95; `webhooks.ts`).
 *   7. settlement run: 10,000 eligible transactions, then the same with 100,000 settled ones in the
 *      table, each in a fresh service (`settlement.ts`).
 *
 *   8. the capacity model (`capacity/`): a payment's life measured on DynamoDB Local, each call's consumed capacity
 *      and the partitions it touched, projected onto `capacity/load-model.json` (10,000 payments a second): the
 *      hottest key of each partition key shape, the ceilings, units and cost per payment (docs/performance.md).
 *
 * `npm run bench -- settlement` runs section 7 alone, `npm run bench -- capacity` section 8, `npm run bench -- checkout` sections 2 and 5, `npm run bench --
 * webhooks` section 6 (quiet, then beside a noisy neighbour: webhooks.ts). `--json`
 * keeps stdout for one line, the JSON of every figure (the tables go to stderr); without it the tables go to
 * stdout and the JSON line still ends it. Progress goes to stderr. Exit code: 0 when every target measured is
 * met (docs/performance.md), 1 when one is missed, 2 when the bench itself failed (an error, a non-2xx answer
 * under load, a failed check).
 *
 * Local only (loopback), bounded in count and time; it starts and stops its own services. Settings (env):
 * BENCH_STARTUP_RUNS (3), BENCH_REQUESTS (100 sequential each), BENCH_WEBHOOK_PAYMENTS (>= 50), BENCH_NOISY_SECONDS
 * (60: how long partner B's payments go on beside the noisy neighbour, at least),
 * BENCH_CONCURRENCY (16), BENCH_LOAD_SECONDS (20: each throughput phase, in all), BENCH_CHECKOUT_REQUESTS (a count
 * instead, for the checkout phase), BENCH_LOAD_ROUNDS (2 alternating slices of each phase), BENCH_WARMUP (200),
 * BENCH_SETTLEMENT_ELIGIBLE (10,000), BENCH_SETTLEMENT_HISTORY (100,000), BENCH_CPU_PROF_DIR (unset: CPU profiles
 * of the latency/throughput service, `--cpu-prof`, written there when it stops).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { Console } from 'node:console';
import { join } from 'node:path';
import { issueLocalAdminToken } from '../lib/auth/admin-token';
import { loadConfig } from '../lib/config';
import { adminPost, checkoutBody, createBenchClient, createBenchPartner, type BenchPartner } from './api';
import { benchCalls } from './calls';
import { benchThroughput, type LoadSettings, type Payee } from './checkout';
import { checkTargets, type Figures } from './report';
import { type ServiceProcess, round, sleep, startService, stopService, waitUntilIdle } from '../infra/local/runtime/service-process';
import { benchSettlement } from './settlement';
import { benchCapacity } from './capacity/index';
import { DEAD_ENDPOINTS, NOISY_PAYMENTS, startWebhookReceiver, timeWebhooks, timeWebhooksBesideNoisyNeighbour } from './webhooks';

const STARTUP_RUNS = Math.max(1, Number(process.env.BENCH_STARTUP_RUNS ?? 3));
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 100);
/** Payments timed from processor event to partner webhook (at least 50, so p95 is not the maximum of a handful). */
const WEBHOOK_PAYMENTS = Math.max(50, Number(process.env.BENCH_WEBHOOK_PAYMENTS ?? 50));
const LOAD: LoadSettings = {
  concurrency: Number(process.env.BENCH_CONCURRENCY ?? 16),
  seconds: Number(process.env.BENCH_LOAD_SECONDS ?? 20),
  requests: process.env.BENCH_CHECKOUT_REQUESTS === undefined ? undefined : Number(process.env.BENCH_CHECKOUT_REQUESTS),
  warmup: Number(process.env.BENCH_WARMUP ?? 200),
  rounds: Math.max(1, Number(process.env.BENCH_LOAD_ROUNDS ?? 2)),
};
/** How long the service is given to go idle between load phases. */
const IDLE_WAIT_MS = 60_000;

const SECTIONS = ['settlement', 'checkout', 'webhooks', 'capacity'] as const;
const args = process.argv.slice(2);
const JSON_ONLY = args.includes('--json');
const ONLY = args.find((arg) => arg !== '--json');
if (ONLY !== undefined && !(SECTIONS as readonly string[]).includes(ONLY)) {
  console.error(`usage: npm run bench [-- [settlement | checkout | webhooks | capacity] [--json]], not ${args.join(' ')}`);
  process.exit(2);
}
/** The human tables: stdout, or stderr with `--json`. */
const out = JSON_ONLY ? new Console({ stdout: process.stderr, stderr: process.stderr }) : console;
const progress = (line: string) => process.stderr.write(`${line}\n`);

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

async function timed<T>(samples: number[], action: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await action();
  samples.push(performance.now() - started);
  return result;
}

/** Waits for the service's processes to go idle (the stream relay catching up with a phase's writes). */
const settle = (service: ServiceProcess, after: string) =>
  waitUntilIdle(service, IDLE_WAIT_MS, (ms) => progress(`  the service was still busy ${round(ms / 1000)} s after ${after}; going on`));

/** Sections 3 and 4: sequential latency and 10 identical concurrent requests. Returns a real checkout's answer. */
async function latencySections(service: ServiceProcess, partner: BenchPartner, merchant: string) {
  progress(`Sequential latency: ${REQUESTS} each of GET /health, POST /clients, checkout-intent`);
  const health: number[] = [];
  for (let i = 0; i < REQUESTS; i++) await timed(health, () => fetch(`${service.baseUrl}/health`).then((response) => response.text()));
  const clients: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const response = await timed(clients, () => partner.signed('/clients', { client_id: `bench-${i}-${randomUUID().slice(0, 6)}`, legal_name: 'Bench Ltd' }));
    if (response.status !== 201) throw new Error(`POST /clients answered ${response.status}`);
    await response.arrayBuffer();
  }
  const checkouts: number[] = [];
  let checkoutAnswer = '';
  for (let i = 0; i < REQUESTS; i++) {
    const response = await timed(checkouts, () => partner.signed('/transactions/checkout-intent', checkoutBody(partner.partnerId, merchant, `bench-${i}`, (1000 + i) / 100)));
    checkoutAnswer = await response.text();
    if (response.status !== 201) throw new Error(`checkout-intent answered ${response.status}: ${checkoutAnswer}`);
  }

  // 10 concurrent identical requests under one idempotency key
  const body = { client_id: `bench-concurrent-${randomUUID().slice(0, 6)}`, legal_name: 'Concurrent Ltd' };
  const idempotencyKey = randomUUID();
  const answers = await Promise.all(
    Array.from({ length: 10 }, async () => {
      const response = await partner.signed('/clients', body, idempotencyKey);
      const json = (await response.json()) as { idempotentReplay?: boolean; code?: string };
      return response.status === 201 ? (json.idempotentReplay ? '201 replay' : '201 created') : `${response.status} ${json.code}`;
    }),
  );
  const list = (await (await fetch(`${service.baseUrl}/clients?limit=200`, { headers: { 'x-api-key': partner.apiKey } })).json()) as { items: Array<{ client_id: string }> };
  const tally = answers.reduce<Record<string, number>>((counts, answer) => ({ ...counts, [answer]: (counts[answer] ?? 0) + 1 }), {});

  out.log(`\nSequential request latency through the local stack (${REQUESTS} each)`);
  out.table([summarise('GET /health', health), summarise('POST /clients (signed)', clients), summarise('POST /transactions/checkout-intent', checkouts)]);
  out.log('10 concurrent identical POST /clients, one idempotency key');
  out.table([{ ...tally, clients_created: list.items.filter((client) => client.client_id === body.client_id).length }]);
  return { checkoutAnswer, checkoutP50Ms: summarise('', checkouts).p50_ms };
}

/** Section 5: the DB bound and checkout-intent under load, alternating, on the same service. */
async function throughputSection(service: ServiceProcess, payee: Payee, checkoutAnswer: string): Promise<Figures> {
  progress(`\nCheckout throughput at ${LOAD.concurrency} in flight`);
  const { db, checkout } = await benchThroughput(service, payee, checkoutAnswer, LOAD, (after) => settle(service, after));
  const ratio = Math.round((checkout.rps / db.rps) * 100) / 100;

  out.log(`\nThroughput at ${LOAD.concurrency} in flight, ${LOAD.rounds} alternating slices each: DynamoDB Local's rate for a checkout's 4 calls (bare SDK loop), and checkout-intent over HTTP (autocannon)`);
  out.table(
    [
      { phase: 'DB bound (4-call sequence)', ...db, non2xx: '' },
      { phase: 'checkout-intent over HTTP', ...checkout, non2xx: checkout.non2xx },
    ].map(({ phase, n, seconds, rps, p50_ms, p95_ms, p99_ms, max_ms, rounds, non2xx }) => ({ phase, n, seconds, per_s: rps, per_s_by_slice: rounds.join(' / '), p50_ms, p95_ms, p99_ms, max_ms, non2xx })),
  );
  out.log('Mean milliseconds of each call in the DB bound loop');
  out.table([db.call_ms]);
  out.log('CPU milliseconds per DB bound sequence / per checkout: the service\'s node processes, DynamoDB Local\'s JVM, the bench process');
  out.table({ 'DB bound sequence': db.cpu_ms_per_op, 'checkout-intent': checkout.cpu_ms_per_op });
  out.log(`checkout_rps / db_bound_rps = ${ratio}`);
  if (checkout.non2xx > 0 || checkout.errors > 0) {
    throw new Error(`checkout under load: ${checkout.non2xx} non-2xx answers, ${checkout.errors} errors (${JSON.stringify(checkout.statuses)}): ${checkout.sampleFailures.join(' | ')}`);
  }
  return {
    concurrency: LOAD.concurrency,
    db_bound_rps: db.rps,
    db_bound_sequences: db.n,
    db_bound_p50_ms: db.p50_ms,
    db_bound_p99_ms: db.p99_ms,
    db_bound_rps_by_slice: db.rounds,
    db_bound_call_ms: db.call_ms,
    db_bound_cpu_ms_per_sequence: db.cpu_ms_per_op,
    checkout_rps: checkout.rps,
    checkout_requests: checkout.n,
    checkout_rps_by_slice: checkout.rounds,
    checkout_ratio_to_db_bound: ratio,
    checkout_p50_ms: checkout.p50_ms,
    checkout_p95_ms: checkout.p95_ms,
    checkout_p99_ms: checkout.p99_ms,
    checkout_max_ms: checkout.max_ms,
    checkout_non2xx: checkout.non2xx,
    checkout_cpu_ms_per_request: checkout.cpu_ms_per_op,
  };
}

/**
 * Section 6: processor event -> partner webhook received, payments one after another, on the quiet service; then
 * 6b, another partner's the same way while a noisy neighbour's 20 dead endpoints and 200 payments are in flight
 * (`webhooks.ts`).
 */
async function webhookSection(service: ServiceProcess, token: string, partner: BenchPartner, merchant: string): Promise<Figures> {
  progress(`\nProcessor event -> partner webhook: ${WEBHOOK_PAYMENTS} payments`);
  const receiver = await startWebhookReceiver();
  let samples: number[];
  let received = 0;
  try {
    await adminPost(service, token, `/admin/partners/${partner.partnerId}/webhook-endpoints`, { name: 'Bench', url: receiver.url, events: ['transaction_succeeded'] });
    samples = await timeWebhooks(service, partner, merchant, receiver, WEBHOOK_PAYMENTS, 'webhook');
    await sleep(1_000); // a duplicate would have arrived by now
    received = [...receiver.arrivals.values()].reduce((sum, times) => sum + times.length, 0);
  } finally {
    await receiver.close();
  }
  const webhook = summarise('processor event -> partner webhook received', samples);
  progress(`\nThe same beside a noisy neighbour: ${DEAD_ENDPOINTS} endpoints that never answer, ${NOISY_PAYMENTS} payments`);
  const noisy = await timeWebhooksBesideNoisyNeighbour(service, token, WEBHOOK_PAYMENTS, progress);
  const besideNoisy = summarise(`another partner's, beside ${DEAD_ENDPOINTS} dead endpoints and ${NOISY_PAYMENTS} payments (a minute at least)`, noisy.samples);
  out.log(`\nProcessor event (the sandbox starts posting payment_intent.succeeded) -> partner webhook received, ${WEBHOOK_PAYMENTS} payments one after another`);
  out.table([
    { name: webhook.name, n: webhook.n, p50_ms: webhook.p50_ms, p95_ms: webhook.p95_ms, max_ms: webhook.max_ms, mean_ms: webhook.mean_ms, webhooks_received: received },
    { name: besideNoisy.name, n: besideNoisy.n, p50_ms: besideNoisy.p50_ms, p95_ms: besideNoisy.p95_ms, max_ms: besideNoisy.max_ms, mean_ms: besideNoisy.mean_ms, dead_endpoint_attempts: noisy.deadRequests },
  ]);
  return {
    webhook_n: webhook.n,
    webhook_p50_ms: webhook.p50_ms,
    webhook_p95_ms: webhook.p95_ms,
    webhook_max_ms: webhook.max_ms,
    webhooks_received: received,
    webhook_noisy_neighbor_n: besideNoisy.n,
    webhook_noisy_neighbor_p50_ms: besideNoisy.p50_ms,
    webhook_noisy_neighbor_p95_ms: besideNoisy.p95_ms,
    webhook_noisy_neighbor_max_ms: besideNoisy.max_ms,
    webhook_noisy_neighbor_dead_attempts: noisy.deadRequests,
    webhook_noisy_neighbor_burst_taken_in_ms: noisy.burstTakenInMs,
  };
}

async function main(): Promise<number> {
  const dataDir = mkdtempSync(join(tmpdir(), 'partner-payments-bench-'));
  const config = loadConfig({ LOCAL_DATA_DIR: dataDir });
  const adminToken = () => issueLocalAdminToken(config);
  const figures: Figures = { nproc: availableParallelism(), cpu: cpus()[0]?.model.trim() ?? 'unknown', loadavg_1m_at_start: round(loadavg()[0] ?? NaN) };
  try {
    if (ONLY !== 'settlement' && ONLY !== 'capacity') {
      const startups: number[] = [];
      const shutdowns: number[] = [];
      if (ONLY === undefined) {
        // 1. start-up and shutdown
        progress(`Start-up and shutdown: ${STARTUP_RUNS} runs`);
        for (let run = 0; run < STARTUP_RUNS - 1; run++) {
          const service = await startService(dataDir);
          startups.push(service.startupMs);
          shutdowns.push(await stopService(service));
        }
      }
      if (ONLY !== 'webhooks') {
        // 2. calls per request, in a service of its own (its processor calls go through the counting proxy)
        progress('Calls per request: a service whose processor calls go through a counting proxy');
        const calls = await benchCalls({ startService: (extraEnv) => startService(dataDir, extraEnv), stopService, adminToken });
        out.log('\nDynamoDB calls (x-local-dynamodb-calls) and processor requests (counting proxy) per request, warm');
        out.table(calls.rows);
        Object.assign(figures, {
          checkout_dynamodb_calls: calls.checkoutDynamodbCalls,
          checkout_processor_calls: calls.checkoutProcessorCalls,
          dynamodb_calls_per_request: Object.fromEntries(calls.rows.map((row) => [row.request, row.dynamodb_calls])),
          processor_calls_per_request: Object.fromEntries(calls.rows.map((row) => [row.request, row.processor_calls])),
        });
      }

      progress('\nThe service for latency, throughput and webhooks: starting');
      // BENCH_CPU_PROF_DIR: this service's node processes write V8 CPU profiles there when they exit (`--cpu-prof`).
      const profileDir = process.env.BENCH_CPU_PROF_DIR;
      const service = await startService(dataDir, (): Record<string, string> => (profileDir === undefined ? {} : { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profileDir}` }));
      startups.push(service.startupMs);
      try {
        const token = await adminToken();
        const partner = await createBenchPartner(service, token, 'Bench Pay');
        const merchant = await createBenchClient(partner, `bench-merchant-${randomUUID().slice(0, 6)}`);
        let checkoutAnswer: string;
        if (ONLY === undefined) {
          const latency = await latencySections(service, partner, merchant.clientId);
          checkoutAnswer = latency.checkoutAnswer;
          figures.sequential_checkout_p50_ms = latency.checkoutP50Ms;
        } else {
          const response = await partner.signed('/transactions/checkout-intent', checkoutBody(partner.partnerId, merchant.clientId, 'bench-sample'));
          checkoutAnswer = await response.text();
          if (response.status !== 201) throw new Error(`checkout-intent answered ${response.status}: ${checkoutAnswer}`);
        }
        if (ONLY !== 'webhooks') Object.assign(figures, await throughputSection(service, { partner, clientId: merchant.clientId, clientName: merchant.legalName }, checkoutAnswer));
        if (ONLY === undefined || ONLY === 'webhooks') Object.assign(figures, await webhookSection(service, token, partner, merchant.clientId));
      } finally {
        shutdowns.push(await stopService(service));
      }
      if (ONLY === undefined) {
        out.log('\nStart-up: `npm start -- --in-memory` until GET /api/v1/health = 200 (the counting service not included)');
        out.table([summarise('start-up to healthy', startups)]);
        out.log('Ctrl-C (SIGINT to the process group) until every process exited');
        out.table([summarise('shutdown', shutdowns)]);
        const startup = summarise('', startups);
        const shutdown = summarise('', shutdowns);
        Object.assign(figures, { startup_p50_ms: startup.p50_ms, startup_max_ms: startup.max_ms, shutdown_p50_ms: shutdown.p50_ms, shutdown_max_ms: shutdown.max_ms });
      }
    }
    if (ONLY === undefined || ONLY === 'settlement') {
      // 7. settlement run, each scenario in its own fresh service
      const settlement = await benchSettlement({ startService: () => startService(dataDir), stopService, adminToken, out });
      Object.assign(figures, settlement, {
        settlement_10k_s: Math.round(settlement.settlement_run_10k_ms / 100) / 10,
        settlement_10k_with_history_s: Math.round(settlement.settlement_run_10k_with_history_ms / 100) / 10,
      });
    }
    if (ONLY === undefined || ONLY === 'capacity') {
      // 8. the capacity model, in a service of its own whose DynamoDB calls log their consumed capacity
      Object.assign(figures, await benchCapacity(out, progress));
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  figures.loadavg_1m_at_end = round(loadavg()[0] ?? NaN);
  const targets = checkTargets(figures);
  const missed = targets.filter((row) => row.result === 'MISSED');
  out.log(`\nTargets (${availableParallelism()} cores; load average at start ${String(figures.loadavg_1m_at_start)}, at end ${String(figures.loadavg_1m_at_end)})`);
  out.table(targets);
  out.log(missed.length === 0 ? 'Every target measured is met.' : `${missed.length} target(s) missed: ${missed.map((row) => row.target).join('; ')}`);
  figures.targets_met = missed.length === 0;
  figures.targets_missed = missed.map((row) => row.target);
  console.log(JSON.stringify(figures));
  return missed.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    // The bench itself failed (not a target): say what to look at.
    console.error(error);
    console.error(
      '\nThe bench could not finish. Fix: `npm ci` first; DynamoDB Local needs Java 17+ (`java -version`); run `npm run demo` to see ' +
        'whether the service starts and works on this machine; run the bench alone (a busy machine times its steps out).',
    );
    process.exit(2);
  },
);
