/** Helpers for tests that drive the processor sandbox: a webhook receiver, polling, and a child Node process. */
import { spawn } from 'node:child_process';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { fileURLToPath } from 'node:url';
import Stripe from 'stripe';
import { type ProcessorSandbox, startProcessorSandbox } from '../../infra/local/sandbox/processor';
import { freePort } from './ports';

export interface Delivery {
  headers: IncomingHttpHeaders;
  rawBody: string;
  eventId: string;
  type: string;
  objectId: string;
}

export interface Receiver {
  url: string;
  deliveries: Delivery[];
  close(): Promise<void>;
}

/** A webhook endpoint on `port` (default: a free one); `status(n)` is its answer to the n-th request (1-based). */
export async function startReceiver(status: (n: number) => number = () => 200, port?: number): Promise<Receiver> {
  const deliveries: Delivery[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const event = JSON.parse(rawBody) as { id: string; type: string; data: { object: { id: string } } };
      deliveries.push({ headers: req.headers, rawBody, eventId: event.id, type: event.type, objectId: event.data.object.id });
      res.writeHead(status(deliveries.length), { 'content-type': 'text/plain' }).end('thanks');
    });
  });
  const listenPort = port ?? (await freePort());
  await new Promise<void>((resolve) => server.listen(listenPort, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${listenPort}/webhooks/processor`,
    deliveries,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** The stripe SDK pointed at a sandbox. */
export function sdk(sandbox: Pick<ProcessorSandbox, 'port'>, key: string): Stripe {
  return new Stripe(key, { host: '127.0.0.1', port: sandbox.port, protocol: 'http' });
}

/** Polls until `probe` returns a value (events are delivered asynchronously, after the API response). */
export async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs = 4_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export function deliveryOf(receiver: Receiver, type: string, objectId: string): Promise<Delivery> {
  return waitFor(`${type} for ${objectId}`, () => receiver.deliveries.find((d) => d.type === type && d.objectId === objectId));
}

/** The error a call fails with (and a failure of the test if it does not fail). */
export async function failure(call: Promise<unknown>): Promise<Stripe.errors.StripeError> {
  try {
    await call;
  } catch (error) {
    return error as Stripe.errors.StripeError;
  }
  throw new Error('expected the call to fail');
}

/** Runs an ES module (plain JS; its imports may be TypeScript) in a fresh Node process at the project root. */
export function runModule(source: string, timeoutMs: number): Promise<{ exitCode: number | null; signal: NodeJS.Signals | null; timedOut: boolean; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', source], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer);
      resolve({ exitCode, signal, timedOut, stdout, stderr });
    });
  });
}

/** A sandbox on a free port of 127.0.0.1 with these keys, sending its events to `receiver`. */
export async function startSandboxFor(
  receiver: Pick<Receiver, 'url'>,
  keys: { secretKey: string; publishableKey: string; webhookSecret: string },
  retryDelaysMs: number[],
): Promise<ProcessorSandbox> {
  return startProcessorSandbox({ port: await freePort(), host: '127.0.0.1', ...keys, webhookUrl: receiver.url, retryDelaysMs });
}
