/**
 * Runs `npm start` as a user does, on free ports, and drives the running service over HTTP from outside (as a
 * partner's engineer would): admin calls with the token the start-up banner prints, signed partner mutations.
 */
import { execFileSync, spawn, type ChildProcessByStdio } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { freePort } from './ports';
import { sign } from './api';

/** Every process in the tree under `rootPid`, from `ps`. */
export function descendants(rootPid: number): Array<{ pid: number; args: string }> {
  const rows = execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => ({ pid: Number(match[1]), ppid: Number(match[2]), args: match[3] ?? '' }));
  const found: Array<{ pid: number; args: string }> = [];
  const queue = [rootPid];
  while (queue.length > 0) {
    const parent = queue.shift();
    for (const row of rows.filter((candidate) => candidate.ppid === parent)) {
      found.push({ pid: row.pid, args: row.args });
      queue.push(row.pid);
    }
  }
  return found;
}

const commandOf = (pid: number) => {
  try {
    return execFileSync('ps', ['-o', 'args=', '-p', String(pid)], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
};

export const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Polls `probe` every 250 ms until it returns a value (a throw counts as "not yet"). */
export async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export interface RunningService {
  npm: ChildProcessByStdio<null, Readable, Readable>;
  httpPort: number;
  dynamoPort: number;
  processorPort: number;
  /** The local webhook queue's SQS front (`GET /dead-letters` there lists dead letters). */
  webhookQueuePort: number;
  /** `http://127.0.0.1:<PORT>/api/v1` */
  baseUrl: string;
  /** Everything npm start printed so far (stdout and stderr). */
  output(): string;
  /** npm's exit code, once its output has been read to the end. */
  exited: Promise<number | null>;
  /** The java process of DynamoDB Local under npm, if one runs. */
  javaPid(): number | undefined;
  /** SIGKILLs whatever of the tree is still alive: for `finally`, so no test leaves processes behind. */
  killAll(): void;
}

/**
 * `npm start -- <args>` with its own ports; `env` adds to (or, `undefined`, removes from) this process's
 * environment. Resolves once GET /health answers 200 and the banner is printed (within 60 s, the bound).
 */
export async function startService(
  options: {
    args?: string[];
    env?: Record<string, string | undefined>;
    /** Its own process group, so a test can signal the whole group as Ctrl-C in a terminal does. */
    detached?: boolean;
  } = {},
): Promise<RunningService> {
  const ports = { http: await freePort(), dynamo: await freePort(), processor: await freePort(), webhookQueue: await freePort(), rails: await freePort() };
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: String(ports.http),
    DYNAMODB_LOCAL_PORT: String(ports.dynamo),
    PROCESSOR_SANDBOX_PORT: String(ports.processor),
    WEBHOOK_QUEUE_PORT: String(ports.webhookQueue),
    RAILS_SANDBOX_PORT: String(ports.rails),
    LOG_LEVEL: 'WARN',
  };
  // The integration run's own DynamoDB Local and sandbox: npm start must use the ones it starts.
  for (const name of ['DYNAMODB_ENDPOINT', 'TABLE_NAME', 'PROCESSOR_API_BASE', 'WEBHOOK_QUEUE_URL', 'RAIL_A_API_BASE', 'RAIL_B_API_BASE']) delete env[name];
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  const npm = spawn('npm', ['start', '--', ...(options.args ?? [])], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: options.detached ?? false });
  let output = '';
  npm.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  npm.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  // 'close', not 'exit': it fires only once npm's output has been read to the end.
  const exited = new Promise<number | null>((resolve) => npm.once('close', (code) => resolve(code)));
  /** Every process seen under npm: a child that outlives npm (re-parented) must still be stopped. */
  const seen = new Map<number, string>();
  const remember = () => {
    for (const child of descendants(npm.pid ?? -1)) seen.set(child.pid, child.args);
  };
  const service: RunningService = {
    npm,
    httpPort: ports.http,
    dynamoPort: ports.dynamo,
    processorPort: ports.processor,
    webhookQueuePort: ports.webhookQueue,
    baseUrl: `http://127.0.0.1:${ports.http}/api/v1`,
    output: () => output,
    exited,
    javaPid: () => {
      remember();
      return descendants(npm.pid ?? -1).find((child) => /java .*DynamoDBLocal\.jar/.test(child.args))?.pid;
    },
    killAll: () => {
      remember();
      for (const [pid, args] of [...seen, [npm.pid ?? -1, ''] as const]) {
        // Only a process that is still the one we saw (a pid can be reused once its process is gone).
        if (pid > 0 && isAlive(pid) && (args === '' || commandOf(pid) === args)) process.kill(pid, 'SIGKILL');
      }
    },
  };
  let npmExited = false;
  npm.once('exit', () => (npmExited = true));
  try {
    const outcome = await waitFor(
      async () => {
        // An npm start that stopped (it could not start) will never be healthy: no point waiting the whole minute.
        if (npmExited) return 'exited' as const;
        remember();
        // Healthy, and done printing its banner (the admin token is in it).
        return (await fetch(`${service.baseUrl}/health`)).status === 200 && output.includes('Press Ctrl-C to stop.') ? ('healthy' as const) : undefined;
      },
      60_000,
      'GET /api/v1/health',
    );
    if (outcome === 'exited') {
      // Its last words (why it stopped) may still be in the pipe: read to the end, or for 2 s at most.
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
      throw new Error('npm start exited before GET /api/v1/health answered 200');
    }
  } catch (error) {
    service.killAll();
    throw new Error(`${error instanceof Error ? error.message : String(error)}; npm start said:\n${output}`);
  }
  return service;
}

/** A client of a running service: admin calls and signed partner mutations over plain HTTP. */
export function serviceClient(service: Pick<RunningService, 'baseUrl' | 'output'>) {
  const adminToken = /Admin token[^\n]*\n\s+(\S+)/.exec(service.output())?.[1];
  if (adminToken === undefined) throw new Error(`npm start printed no admin token:\n${service.output()}`);
  const call = async (method: string, path: string, headers: Record<string, string>, body?: string) => {
    const response = await fetch(`${service.baseUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
    const text = await response.text();
    return { status: response.status, body: text === '' ? undefined : (JSON.parse(text) as any) };
  };
  const admin = (method: string, path: string, body?: unknown) =>
    call(method, path, { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }, body === undefined ? undefined : JSON.stringify(body));
  const signed = (credentials: { apiKey: string; hmacSecret: string }, path: string, body: unknown) => {
    const raw = JSON.stringify(body);
    return call('POST', path, {
      'content-type': 'application/json',
      'x-api-key': credentials.apiKey,
      'x-svc-hmac': sign(credentials.hmacSecret, raw),
      'idempotency-key': randomUUID(),
    }, raw);
  };
  return {
    admin,
    signed,
    read: (credentials: { apiKey: string }, path: string) => call('GET', path, { 'x-api-key': credentials.apiKey }),
    /** A KYC-approved partner with a partner-scoped key and one active client. */
    async createPartnerWithClient() {
      const partner = await admin('POST', '/admin/partners', { name: `Partner ${randomUUID().slice(0, 8)}`, service_fee_percentage: 1.5, kyc_status: 'approved' });
      if (partner.status !== 201) throw new Error(`partner not created: ${JSON.stringify(partner.body)}`);
      const key = await admin('POST', `/admin/partners/${partner.body.partner_id}/api-keys`, { scope: 'partner' });
      if (key.status !== 201) throw new Error(`key not created: ${JSON.stringify(key.body)}`);
      const credentials = { partnerId: partner.body.partner_id as string, apiKey: key.body.api_key as string, hmacSecret: key.body.hmac_secret as string };
      const client = await signed(credentials, '/clients', { client_id: `merchant-${randomUUID().slice(0, 12)}`, legal_name: 'Merchant Ltd' });
      if (client.status !== 201) throw new Error(`client not created: ${JSON.stringify(client.body)}`);
      return { ...credentials, clientId: client.body.client_id as string };
    },
  };
}
