/**
 * `npm run bench`, checkout throughput, both at the same number of requests in flight, against the
 * same running service and its DynamoDB Local:
 *
 *   a. the DB bound (`db-bound.ts`): DynamoDB Local's own rate for the exact calls one checkout makes;
 *   b. checkout-intent over HTTP with autocannon, signed, a fresh idempotency key and partner_reference each, the
 *      whole stack: HTTP -> API Gateway event -> middy chain -> DynamoDB Local, and the sandbox processor.
 *
 * Both are warmed up first (not measured: the functions load, DynamoDB Local's JVM compiles its hot paths).
 * Then they alternate, `rounds` slices each (DB, checkout, DB, checkout, ...), so that a machine whose load
 * changes during the run (a shared one), or a JVM still warming, weighs on both alike; the figures are over all
 * slices of a phase. Between slices the service is left to go idle (its stream relay reads every record a slice
 * wrote), so a slice does not pay for the one before.
 */
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { checkoutBody, signedHeaders } from './api';
import { type CallTimes, dbBoundLoop, type Payee } from './db-bound';
import { type ServiceProcess, type CpuSnapshot, cpuBetween, cpuSnapshot, round, type Slice, ticker } from '../infra/local/runtime/service-process';

export type { Payee };

export interface LoadSettings {
  /** Requests (or DB sequences) in flight. */
  concurrency: number;
  /** How long each phase is measured in all (split over the rounds)... */
  seconds: number;
  /** ...or, when set, how many requests the checkout phase sends in all (the DB phase still runs `seconds`). */
  requests: number | undefined;
  /** Unmeasured requests (and sequences) before the first round. */
  warmup: number;
  /** Measured slices of each phase, alternating. */
  rounds: number;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
const progress = (line: string) => process.stderr.write(`  ${line}\n`);

interface CheckoutSlice extends Slice {
  non2xx: number;
  errors: number;
  statuses: Record<string, number>;
  sampleFailures: string[];
}

/**
 * checkout-intent at `concurrency` requests in flight (autocannon connections, no pipelining), each request built
 * by `setupRequest`: a unique partner_reference, a fresh idempotency key, the HMAC of its body.
 */
function checkoutLoad(service: ServiceProcess, payee: Payee, concurrency: number) {
  const { partner } = payee;
  const label = `load-${randomUUID().slice(0, 6)}`;
  let reference = 0;
  return (limit: { amount: number } | { duration: number }) =>
    new Promise<CheckoutSlice>((resolve, reject) => {
      const latencies: number[] = [];
      const statuses: Record<string, number> = {};
      const sampleFailures: string[] = [];
      const cpuBefore = cpuSnapshot(service);
      const stop = ticker('checkout-intent answers', () => latencies.length);
      const instance = autocannon(
        {
          url: `${service.baseUrl}/transactions/checkout-intent`,
          connections: concurrency,
          pipelining: 1,
          timeout: 30,
          ...limit,
          requests: [
            {
              method: 'POST',
              setupRequest: (request) => {
                const raw = JSON.stringify(checkoutBody(partner.partnerId, payee.clientId, `${label}-${++reference}`, (1000 + (reference % 1000)) / 100));
                return { ...request, method: 'POST', body: raw, headers: signedHeaders(partner.apiKey, partner.hmacSecret, raw) };
              },
              onResponse: (status, body) => {
                if ((status < 200 || status >= 300) && sampleFailures.length < 5) sampleFailures.push(`${status} ${body.slice(0, 300)}`);
              },
            },
          ],
        },
        (error: unknown, result: autocannon.Result) => {
          stop();
          if (error !== null && error !== undefined) return reject(error as Error);
          const cpu = cpuBetween(cpuBefore, cpuSnapshot(service));
          resolve({ latencies, seconds: result.duration, cpu, ops: latencies.length, non2xx: result.non2xx, errors: result.errors, statuses, sampleFailures });
        },
      );
      instance.on('response', (_client, statusCode: number, _bytes: number, responseTime: number) => {
        latencies.push(responseTime);
        statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
      });
    });
}

export interface PhaseResult {
  n: number;
  seconds: number;
  rps: number;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  max_ms: number;
  /** Operations per second of each slice, in order. */
  rounds: number[];
  /** CPU milliseconds per operation: the service's node processes, DynamoDB Local's JVM, this process. */
  cpu_ms_per_op: { service: number; dynamodb: number; bench: number };
}

function summarisePhase(slices: Slice[]): PhaseResult {
  const latencies = slices.flatMap((slice) => slice.latencies).sort((a, b) => a - b);
  const seconds = slices.reduce((sum, slice) => sum + slice.seconds, 0);
  const n = latencies.length;
  const ops = slices.reduce((sum, slice) => sum + slice.ops, 0);
  const cpu = (key: keyof CpuSnapshot) => round((slices.reduce((sum, slice) => sum + slice.cpu[key], 0) * 1000) / Math.max(1, ops));
  return {
    n,
    seconds: round(seconds),
    rps: round(n / seconds),
    p50_ms: round(percentile(latencies, 50)),
    p95_ms: round(percentile(latencies, 95)),
    p99_ms: round(percentile(latencies, 99)),
    max_ms: round(latencies.at(-1) ?? Number.NaN),
    rounds: slices.map((slice) => round(slice.latencies.length / slice.seconds)),
    cpu_ms_per_op: { service: cpu('service'), dynamodb: cpu('dynamodb'), bench: cpu('bench') },
  };
}

export interface ThroughputResult {
  db: PhaseResult & { call_ms: CallTimes };
  checkout: PhaseResult & { non2xx: number; errors: number; statuses: Record<string, number>; sampleFailures: string[] };
}

/**
 * Both phases on `service`: warm-ups, then `settings.rounds` alternating slices of each. `settle` waits for the
 * service to go idle. `responseBody` is a real checkout's answer (for the DB bound's completion item).
 */
export async function benchThroughput(
  service: ServiceProcess,
  payee: Payee,
  responseBody: string,
  settings: LoadSettings,
  settle: (after: string) => Promise<unknown>,
): Promise<ThroughputResult> {
  const db = dbBoundLoop(service, payee, responseBody, settings.concurrency);
  const checkout = checkoutLoad(service, payee, settings.concurrency);
  try {
    progress(`warming up: ${settings.warmup} checkout-intent requests, then ${settings.warmup} DB bound sequences`);
    const warm = await checkout({ amount: Math.max(settings.warmup, settings.concurrency) });
    if (warm.non2xx > 0 || warm.errors > 0) throw new Error(`checkout warm-up: ${warm.non2xx} non-2xx, ${warm.errors} errors: ${warm.sampleFailures.join(' | ')}`);
    await db.warmup(settings.warmup);
    const dbSlices: Slice[] = [];
    const checkoutSlices: CheckoutSlice[] = [];
    const sliceSeconds = settings.seconds / settings.rounds;
    const checkoutLimit =
      settings.requests === undefined ? { duration: sliceSeconds } : { amount: Math.max(settings.concurrency, Math.round(settings.requests / settings.rounds)) };
    for (let round = 1; round <= settings.rounds; round++) {
      await settle('a warm-up or a slice');
      progress(`round ${round}/${settings.rounds}: DB bound, ${settings.concurrency} sequences in flight, ${sliceSeconds} s`);
      dbSlices.push(await db.measure(sliceSeconds));
      await settle('a DB bound slice');
      progress(`round ${round}/${settings.rounds}: checkout-intent, ${settings.concurrency} in flight, ${'duration' in checkoutLimit ? `${sliceSeconds} s` : `${checkoutLimit.amount} requests`}`);
      checkoutSlices.push(await checkout(checkoutLimit));
    }
    await settle('the last slice');
    const sum = (key: 'non2xx' | 'errors') => checkoutSlices.reduce((total, slice) => total + slice[key], 0);
    const statuses: Record<string, number> = {};
    for (const slice of checkoutSlices) for (const [status, count] of Object.entries(slice.statuses)) statuses[status] = (statuses[status] ?? 0) + count;
    return {
      db: { ...summarisePhase(dbSlices), call_ms: db.callMs() },
      checkout: {
        ...summarisePhase(checkoutSlices),
        non2xx: sum('non2xx'),
        errors: sum('errors'),
        statuses,
        sampleFailures: checkoutSlices.flatMap((slice) => slice.sampleFailures).slice(0, 5),
      },
    };
  } finally {
    db.close();
  }
}
