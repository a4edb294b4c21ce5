/**
 * `npm start` as a user runs it: the whole local runtime comes up, answers health, and Ctrl-C (SIGINT to npm)
 * stops it without leaving a Java or Node process behind, the sandbox checkout's backend included.
 */
import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { descendants, isAlive, startService, waitFor, type RunningService } from '../../support/npm-start';

const processGroupOf = (pid: number) => execFileSync('ps', ['-o', 'pgid=', '-p', String(pid)], { encoding: 'utf8' }).trim();

/**
 * How the user stops it: Ctrl-C in a terminal signals the whole foreground process group; `kill` signals npm; a
 * closed terminal or dropped SSH session hangs up the foreground process group (npm forwards only SIGINT and
 * SIGTERM, so node gets the SIGHUP from the kernel, not from npm). DynamoDB Local's Java, in a group of its own,
 * hears none of these: node must stop it.
 */
const stops = [
  { how: 'Ctrl-C (SIGINT to the process group)', signal: 'SIGINT' as const, group: true, signalExitCode: 130 },
  { how: 'SIGTERM to npm', signal: 'SIGTERM' as const, group: false, signalExitCode: 143 },
  // npm dies of the hangup itself (no exit code), while node stops the service and prints "Stopped.".
  { how: 'a closed terminal (SIGHUP to the process group)', signal: 'SIGHUP' as const, group: true, signalExitCode: null },
];

describe('npm start', () => {
  it.each(stops)('serves health within 60 s, and $how leaves no java or node process behind', async ({ signal, group, signalExitCode }) => {
    let service: RunningService | undefined;
    try {
      // Act: start, and wait until healthy
      const startedAt = Date.now();
      service = await startService({ args: ['--in-memory'], detached: group });
      const elapsedMs = Date.now() - startedAt;
      const health = await fetch(`${service.baseUrl}/health`);

      // Assert: healthy with every dependency checked, and the start-up banner says where things listen
      expect(await health.json()).toEqual({ status: 'ok', checks: { dynamodb: 'ok', processor: 'ok' } });
      expect(elapsedMs).toBeLessThan(60_000);
      expect(service.output()).toContain(`http://localhost:${service.httpPort}/api/v1`);
      expect(service.output()).toContain(`http://127.0.0.1:${service.dynamoPort}`);
      expect(service.output()).toContain(`:${service.processorPort}`);
      // The sandbox checkout's backend, a process of its own, starts on the first visit: it must stop too.
      const sandbox = await fetch(`${new URL(service.baseUrl).origin}/sandbox/products`);
      expect(sandbox.status).toBe(200);
      const tree = descendants(service.npm.pid ?? -1);
      expect(tree.filter((child) => child.args.includes('examples/partner-backend/src/main.ts'))).toHaveLength(1);
      expect(service.javaPid()).toBeDefined();
      // DynamoDB Local must outlive the requests still being answered: a terminal's Ctrl-C (a signal to the
      // foreground process group) must not reach it; the runtime stops it last.
      expect(processGroupOf(service.javaPid() ?? -1)).not.toBe(processGroupOf(service.npm.pid ?? -1));

      // Act: stop it
      if (group) process.kill(-(service.npm.pid ?? 0), signal);
      else service.npm.kill(signal);
      const code = await service.exited;

      // Assert: clean exit, every process of the tree gone, every port closed
      // npm exits 0, or 128 + signal when the signal reached npm itself (as a shell reports after Ctrl-C), or
      // none when it died of it; the service's own clean exit is the "Stopped." line.
      expect([0, signalExitCode]).toContain(code);
      expect(service.output()).toContain(`${signal} received: stopping`);
      expect(service.output()).toContain('Stopped.');
      expect(service.output()).not.toContain('DynamoDB Local exited unexpectedly');
      await waitFor(async () => (tree.every((child) => !isAlive(child.pid)) ? true : undefined), 10_000, 'all processes to exit');
      await expect(fetch(`${service.baseUrl}/health`)).rejects.toThrow();
      await expect(fetch(`http://127.0.0.1:${service.dynamoPort}/`)).rejects.toThrow();
      await expect(fetch(`http://127.0.0.1:${service.processorPort}/v1/payment_intents`)).rejects.toThrow();
    } finally {
      // Whatever the outcome, leave nothing running for the next test.
      service?.killAll();
    }
  }, 120_000);
});
