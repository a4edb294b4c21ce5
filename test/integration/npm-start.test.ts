/**
 * `npm start` as a user runs it: the whole local runtime comes up, answers health, and Ctrl-C (SIGINT to npm)
 * stops it without leaving a Java or Node process behind.
 */
import { describe, expect, it } from '@jest/globals';
import { execFileSync, spawn } from 'node:child_process';
import { freePort } from '../support/ports';

/** Every process in the tree under `rootPid`, from `ps`. */
function descendants(rootPid: number): Array<{ pid: number; args: string }> {
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

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** How the user stops it: Ctrl-C in a terminal signals the whole foreground process group; `kill` signals npm. */
const stops = [
  { how: 'Ctrl-C (SIGINT to the process group)', signal: 'SIGINT' as const, group: true, signalExitCode: 130 },
  { how: 'SIGTERM to npm', signal: 'SIGTERM' as const, group: false, signalExitCode: 143 },
];

describe('npm start', () => {
  it.each(stops)('serves health within 60 s, and $how leaves no java or node process behind', async ({ signal, group, signalExitCode }) => {
    // Arrange
    const [httpPort, dynamoPort, processorPort] = [await freePort(), await freePort(), await freePort()];
    const env: Record<string, string | undefined> = {
      ...process.env,
      PORT: String(httpPort),
      DYNAMODB_LOCAL_PORT: String(dynamoPort),
      PROCESSOR_SANDBOX_PORT: String(processorPort),
      LOG_LEVEL: 'WARN',
    };
    for (const name of ['DYNAMODB_ENDPOINT', 'TABLE_NAME', 'PROCESSOR_API_BASE']) delete env[name];
    const npm = spawn('npm', ['start', '--', '--in-memory'], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: group });
    let output = '';
    npm.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    npm.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    // 'close', not 'exit': it fires only once npm's output has been read to the end.
    const exited = new Promise<number | null>((resolve) => npm.once('close', (code) => resolve(code)));
    let tree: Array<{ pid: number; args: string }> = [];

    try {
      // Act: wait until healthy
      const startedAt = Date.now();
      const health = await waitFor(
        async () => {
          const response = await fetch(`http://127.0.0.1:${httpPort}/api/v1/health`);
          return response.status === 200 ? ((await response.json()) as unknown) : undefined;
        },
        60_000,
        'GET /api/v1/health',
      );
      const elapsedMs = Date.now() - startedAt;

      // Assert: healthy, and the start-up banner says where things listen
      expect(health).toEqual({ status: 'ok' });
      expect(elapsedMs).toBeLessThan(60_000);
      expect(output).toContain(`http://localhost:${httpPort}/api/v1`);
      expect(output).toContain(`http://127.0.0.1:${dynamoPort}`);
      expect(output).toContain(`:${processorPort}`);
      tree = descendants(npm.pid ?? -1);
      expect(tree.some((child) => /java .*DynamoDBLocal\.jar/.test(child.args))).toBe(true);

      // Act: stop it
      if (group) process.kill(-(npm.pid ?? 0), signal);
      else npm.kill(signal);
      const code = await exited;

      // Assert: clean exit, every process of the tree gone, both ports closed
      // npm exits 0, or 128 + signal when the signal reached npm itself (as a shell reports after Ctrl-C);
      // the service's own clean exit is the "Stopped." line.
      expect([0, signalExitCode]).toContain(code);
      expect(output).toContain(`${signal} received: stopping`);
      expect(output).toContain('Stopped.');
      await waitFor(async () => (tree.every((child) => !isAlive(child.pid)) ? true : undefined), 10_000, 'all processes to exit');
      await expect(fetch(`http://127.0.0.1:${httpPort}/api/v1/health`)).rejects.toThrow();
      await expect(fetch(`http://127.0.0.1:${dynamoPort}/`)).rejects.toThrow();
      await expect(fetch(`http://127.0.0.1:${processorPort}/v1/payment_intents`)).rejects.toThrow();
    } finally {
      // Whatever the outcome, leave nothing running for the next test.
      for (const { pid } of [...tree, { pid: npm.pid ?? -1 }]) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    }
  }, 120_000);
});
