/**
 * The service in a process of its own, for the benchmarks, the demo and the tests that need `npm start` itself:
 * starting `npm start -- --in-memory` on free ports in its own process group and stopping it as Ctrl-C does, and the
 * CPU time its processes (and DynamoDB Local's Java, which runs in a process group of its own) have used, read from
 * Linux's /proc.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONFIG_VARIABLES } from '../../../lib/config';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const round = (value: number) => Math.round(value * 10) / 10;

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });

/** Settings the local runtime derives from its ports (README's configuration table) when they are unset. */
const DERIVED_ADDRESSES = ['DYNAMODB_ENDPOINT', 'TABLE_NAME', 'PROCESSOR_API_BASE', 'WEBHOOK_QUEUE_URL', 'RAIL_A_API_BASE', 'RAIL_B_API_BASE'];

export interface ServiceProcess {
  child: ChildProcess;
  baseUrl: string;
  startupMs: number;
  /** The environment the service was started with on top of the bench's own (its ports, its data directory). */
  env: Record<string, string>;
}

/**
 * Starts `npm start -- --in-memory` on free ports and waits until GET /health answers 200. `extraEnv` gets the
 * chosen ports and may add settings (the call-count section points `PROCESSOR_API_BASE` at a counting proxy).
 */
export async function startService(
  dataDir: string,
  extraEnv: (env: Record<string, string>) => Record<string, string> = () => ({}),
  options: {
    logFile?: string;
    /** Start from the local defaults: none of the caller's settings (README's configuration table) reach the service. */
    localDefaults?: boolean;
  } = {},
): Promise<ServiceProcess> {
  const ports = {
    PORT: String(await freePort()),
    DYNAMODB_LOCAL_PORT: String(await freePort()),
    PROCESSOR_SANDBOX_PORT: String(await freePort()),
    WEBHOOK_QUEUE_PORT: String(await freePort()),
    RAILS_SANDBOX_PORT: String(await freePort()),
    LOCAL_DATA_DIR: dataDir,
    LOG_LEVEL: 'WARN',
  };
  const env = { ...ports, ...extraEnv(ports) };
  const started = performance.now();
  // Addresses derived from the ports above when unset: one inherited (a test run's DynamoDB Local, say) would point
  // the new service at another's dependencies.
  const dropped = new Set([...DERIVED_ADDRESSES, ...(options.localDefaults === true ? CONFIG_VARIABLES : [])]);
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !dropped.has(name)));
  // Its output goes to `logFile` when given (the demo shows its end when a step fails), else nowhere.
  const log = options.logFile === undefined ? 'ignore' : openSync(options.logFile, 'a');
  const child = spawn('npm', ['start', '--', '--in-memory'], { env: { ...inherited, ...env }, stdio: ['ignore', log, log], detached: true });
  if (typeof log === 'number') closeSync(log);
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
export async function stopService(service: ServiceProcess): Promise<number> {
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

/** A process's name, process group and CPU seconds used (user + system), from /proc/<pid>/stat. */
function readStat(pid: string): { name: string; pgrp: number; seconds: number } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined; // exited meanwhile
  }
  const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the name: state, ppid, pgrp, ..., utime (14th field of the line) and stime (15th), in clock ticks (100 a second).
  return { name, pgrp: Number(fields[2]), seconds: (Number(fields[11]) + Number(fields[12])) / 100 };
}

/** CPU seconds used so far by each process of the group, summed by process name (Linux /proc; empty elsewhere). */
function groupCpuSeconds(pgid: number): Map<string, number> {
  const used = new Map<string, number>();
  if (!existsSync('/proc/self/stat')) return used;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(entry);
    if (stat === undefined || stat.pgrp !== pgid) continue;
    used.set(stat.name, (used.get(stat.name) ?? 0) + stat.seconds);
  }
  return used;
}

/**
 * DynamoDB Local's Java process of a service started in memory: the pid file `dynamodb-local.ts` writes in the
 * temp directory (`<java pid> <node pid>`).
 */
function dynamoDbLocalPid(service: ServiceProcess): string | undefined {
  try {
    return readFileSync(join(tmpdir(), `partner-payments-dynamodb-local-${service.env.DYNAMODB_LOCAL_PORT}.pid`), 'utf8').trim().split(' ')[0];
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds used so far: `service` (the node processes of `npm start`: HTTP API, functions, sandbox processor,
 * stream relay, queue), `dynamodb` (DynamoDB Local's Java) and `bench` (this process: load generator, SDK loop).
 */
export interface CpuSnapshot {
  service: number;
  dynamodb: number;
  bench: number;
}

export function cpuSnapshot(service: ServiceProcess): CpuSnapshot {
  const group = groupCpuSeconds(service.child.pid ?? 0);
  const javaPid = dynamoDbLocalPid(service);
  const own = process.cpuUsage();
  return {
    service: [...group.values()].reduce((sum, seconds) => sum + seconds, 0),
    dynamodb: javaPid === undefined ? Number.NaN : (readStat(javaPid)?.seconds ?? Number.NaN),
    bench: (own.user + own.system) / 1e6,
  };
}

export const cpuBetween = (before: CpuSnapshot, after: CpuSnapshot): CpuSnapshot => ({
  service: after.service - before.service,
  dynamodb: after.dynamodb - before.dynamodb,
  bench: after.bench - before.bench,
});

/**
 * One measured slice of a load phase: the latency of each operation completed within it, its length in seconds,
 * and the CPU used meanwhile by `ops` operations (those still running at its end included).
 */
export interface Slice {
  latencies: number[];
  seconds: number;
  cpu: CpuSnapshot;
  ops: number;
}

/** Reports a running slice on stderr every 5 s (operations a second since the last report); returns its stop. */
export function ticker(label: string, done: () => number): () => void {
  const started = performance.now();
  let reported = 0;
  const timer = setInterval(() => {
    const count = done();
    process.stderr.write(`  ${label}: ${Math.round((performance.now() - started) / 1000)} s, ${round((count - reported) / 5)}/s in the last 5 s\n`);
    reported = count;
  }, 5_000);
  return () => clearInterval(timer);
}

/** The process group counts as idle below this many cores busy over a second... */
const IDLE_CORES = 0.15;

/**
 * Waits until the service's processes are idle (e.g. its stream relay has read every record a load wrote), at
 * most `maxMs`; resolves with the time waited.
 */
export async function waitUntilIdle(service: ServiceProcess, maxMs: number, onBusy?: (waitedMs: number) => void): Promise<number> {
  const pgid = service.child.pid ?? 0;
  const started = performance.now();
  let before = groupCpuSeconds(pgid);
  while (performance.now() - started < maxMs) {
    await sleep(1_000);
    const after = groupCpuSeconds(pgid);
    const busy = [...after].reduce((sum, [name, seconds]) => sum + seconds - (before.get(name) ?? 0), 0);
    before = after;
    if (busy < IDLE_CORES) return performance.now() - started;
  }
  onBusy?.(performance.now() - started);
  return performance.now() - started;
}
