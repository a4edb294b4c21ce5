/**
 * A process to kill: runs an ES module (plain JS; its imports may be TypeScript, through tsx) in a fresh Node
 * process at the project root, with the test's own environment (jest gives each test file a copy of
 * `process.env`; a child spawned without `env` would get the worker's, not the file's), and lets the test SIGKILL it
 * the moment it prints a given line: a crash at an exact step, with no cleanup code run (no `finally`, no
 * idempotency key released), as when a Lambda container is killed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface KillableChild {
  /** Resolves with everything printed so far once `line` was printed; rejects if the process ends first or after `timeoutMs`. */
  printed(line: string, timeoutMs: number): Promise<string>;
  /** SIGKILL, and resolves once the process is gone. */
  kill(): Promise<void>;
  stderr(): string;
}

export function startChild(source: string, env: Record<string, string | undefined> = {}): KillableChild {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', source], {
    cwd: fileURLToPath(new URL('../../..', import.meta.url)),
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exit.then(() => (exited = true));
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return {
    printed: (line, timeoutMs) =>
      new Promise((resolve, reject) => {
        const deadline = Date.now() + timeoutMs;
        const poll = () => {
          if (stdout.split('\n').includes(line)) return resolve(stdout);
          if (exited) return reject(new Error(`the child ended before printing ${line}: ${stdout}\n${stderr}`));
          if (Date.now() > deadline) return reject(new Error(`the child did not print ${line} within ${timeoutMs} ms: ${stdout}\n${stderr}`));
          setTimeout(poll, 10);
        };
        poll();
      }),
    kill: async () => {
      if (!exited) child.kill('SIGKILL');
      await exit;
    },
    stderr: () => stderr,
  };
}
