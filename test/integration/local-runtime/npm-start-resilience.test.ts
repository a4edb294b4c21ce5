/**
 * `npm start` when things go wrong underneath it: a stop signal while requests are running, and DynamoDB
 * Local's Java process dying. Each test runs the real `npm start` and drives it over HTTP from outside.
 */
import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAlive, serviceClient, startService, waitFor, type RunningService } from '../../support/npm-start';

const checkoutBody = (partner: { partnerId: string; clientId: string }, reference: string) => ({
  partner_id: partner.partnerId,
  client_id: partner.clientId,
  amount: 12.34,
  currency: 'EUR',
  email: 'buyer@example.com',
  partner_reference: reference,
});

describe('npm start, stopped while requests are in flight', () => {
  it('answers every request whose transaction it wrote before it exits (SIGTERM drains, never resets)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'npm-start-drain-'));
    let service: RunningService | undefined;
    let restarted: RunningService | undefined;
    try {
      // Arrange: a service keeping its data on disk, a partner with a client
      service = await startService({ env: { LOCAL_DATA_DIR: dataDir } });
      const api = serviceClient(service);
      const partner = await api.createPartnerWithClient();

      // Act: 12 checkouts at once; SIGTERM as soon as the first is answered, while the others still run
      let signalledAt = Number.POSITIVE_INFINITY;
      const answers = Array.from({ length: 12 }, (_, i) => `drain-${i}-${randomUUID()}`).map((reference) =>
        api.signed(partner, '/transactions/checkout-intent', checkoutBody(partner, reference)).then(
          (response) => ({ reference, status: response.status, answeredAt: Date.now() }),
          (error: unknown) => ({ reference, status: undefined, error: String(error), answeredAt: Date.now() }),
        ),
      );
      await Promise.race(answers);
      signalledAt = Date.now();
      service.npm.kill('SIGTERM');
      const settled = await Promise.all(answers);
      expect([0, 143]).toContain(await service.exited); // 143: npm itself reports the SIGTERM it passed on

      // Act: start again on the same data, and read what was written
      restarted = await startService({ env: { LOCAL_DATA_DIR: dataDir } });
      const listed = await serviceClient(restarted).read(partner, '/transactions?limit=200');
      expect(listed.status).toBe(200);
      const written = (listed.body.items as Array<{ partnerReference: string }>).map((item) => item.partnerReference);

      // Assert: the signal did arrive mid-flight (some answers came after it), and no written transaction's
      // answer was lost: each one that exists was answered 201
      expect(settled.filter((answer) => answer.answeredAt > signalledAt).length).toBeGreaterThan(0);
      expect(written.length).toBeGreaterThan(0);
      const statusOf = new Map(settled.map((answer) => [answer.reference, answer.status]));
      expect(written.map((reference) => ({ reference, status: statusOf.get(reference) }))).toEqual(
        written.map((reference) => ({ reference, status: 201 })),
      );
      expect(service.output()).toContain('Stopped.');
    } finally {
      service?.killAll();
      restarted?.killAll();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000);
});

describe('npm start, when DynamoDB Local dies', () => {
  it('reports it on /health (503 naming dynamodb), restarts it, and is healthy and writable again', async () => {
    let service: RunningService | undefined;
    try {
      // Arrange
      service = await startService({ args: ['--in-memory'] });
      const api = serviceClient(service);
      const firstJava = service.javaPid();
      expect(firstJava).toBeDefined();

      // Act: kill -9 the Java process, then watch health until it is 200 again on a new Java process
      process.kill(firstJava ?? -1, 'SIGKILL');
      const seen: Array<{ status: number; body: unknown }> = [];
      const running = service;
      await waitFor(
        async () => {
          const response = await fetch(`${running.baseUrl}/health`, { signal: AbortSignal.timeout(5_000) });
          seen.push({ status: response.status, body: await response.json() });
          const javaNow = running.javaPid();
          return response.status === 200 && javaNow !== undefined && javaNow !== firstJava ? true : undefined;
        },
        60_000,
        'health to recover on a restarted DynamoDB Local',
      );

      // Assert: while it was down, health said so and named the check; after the restart every check passes,
      // the (in-memory) table is back, and a write succeeds
      expect(seen).toContainEqual({ status: 503, body: { status: 'unavailable', checks: { dynamodb: 'fail', processor: 'ok' } } });
      expect(seen.at(-1)).toEqual({ status: 200, body: { status: 'ok', checks: { dynamodb: 'ok', processor: 'ok' } } });
      expect(service.output()).toMatch(/DynamoDB Local exited unexpectedly .*restart/i);
      const partner = await api.admin('POST', '/admin/partners', { name: 'After restart', service_fee_percentage: 1 });
      expect(partner.status).toBe(201);
    } finally {
      service?.killAll();
      // killAll() is a kill -9: the restarted Java's pid file stays (harmless, but not this test's to leave)
      if (service !== undefined) rmSync(join(tmpdir(), `partner-payments-dynamodb-local-${service.dynamoPort}.pid`), { force: true });
    }
  }, 120_000);

  it('stops the service with a clear message when DynamoDB Local cannot be restarted', async () => {
    let service: RunningService | undefined;
    const squatter = createServer();
    try {
      // Arrange
      service = await startService({ args: ['--in-memory'] });
      const javaPid = service.javaPid();

      // Act: kill -9 the Java process and take its port, so the restart cannot bind it
      process.kill(javaPid ?? -1, 'SIGKILL');
      const port = service.dynamoPort;
      await waitFor(
        () => new Promise<true | undefined>((resolve) => {
          squatter.once('error', () => resolve(undefined));
          squatter.listen(port, '0.0.0.0', () => resolve(true));
        }),
        5_000,
        `port ${port} to be free`,
      );
      const code = await service.exited;

      // Assert: a non-zero exit that says what happened, not a service answering 500 to everything
      expect(code).not.toBe(0);
      expect(service.output()).toMatch(/DynamoDB Local exited unexpectedly[\s\S]*could not be restarted[\s\S]*stopping/i);
      await expect(fetch(`${service.baseUrl}/health`)).rejects.toThrow();
    } finally {
      service?.killAll();
      squatter.close();
    }
  }, 120_000);
});

describe('npm start --in-memory, after a run killed outright', () => {
  it('stops the DynamoDB Local the killed run left holding the port (kill -9 of its process group), and starts', async () => {
    let killed: RunningService | undefined;
    let next: RunningService | undefined;
    try {
      // Arrange: a run killed with its whole process group (kill -9 -- -<pgid>): no handler of node's runs, and
      // Java, in a process group of its own, survives it holding the port
      killed = await startService({ args: ['--in-memory'], detached: true });
      const leftBehind = killed.javaPid() ?? -1;
      process.kill(-(killed.npm.pid ?? 0), 'SIGKILL');
      await killed.exited;
      expect(isAlive(leftBehind)).toBe(true);

      // Act: start again on the same DynamoDB Local port
      next = await startService({ args: ['--in-memory'], env: { DYNAMODB_LOCAL_PORT: String(killed.dynamoPort) } });

      // Assert: the left-behind Java is gone, and the new run serves on that port with a Java of its own
      await waitFor(async () => (isAlive(leftBehind) ? undefined : true), 5_000, `the left-behind java ${leftBehind} to exit`);
      expect(next.output()).toContain(`Stopping the DynamoDB Local a previous run left behind (pid ${leftBehind}, port ${killed.dynamoPort})`);
      expect(next.output()).toContain(`http://127.0.0.1:${killed.dynamoPort}`);
      expect(next.javaPid()).toBeDefined();
      expect(next.javaPid()).not.toBe(leftBehind);
    } finally {
      next?.killAll();
      killed?.killAll();
      // killAll() is a kill -9 too: the pid file the next run wrote stays (harmless, but not this test's to leave)
      if (killed !== undefined) rmSync(join(tmpdir(), `partner-payments-dynamodb-local-${killed.dynamoPort}.pid`), { force: true });
    }
  }, 120_000);
});
