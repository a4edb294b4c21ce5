/** The DynamoDB Local launcher on this machine's Java: real processes, real ports. */
import { describe, expect, it } from '@jest/globals';
import { ListTablesCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JavaMissingError, startDynamoDbLocal, startSupervisedDynamoDbLocal } from '../../../infra/local/runtime/dynamodb-local';
import { freePort } from '../../support/ports';

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Where a run records its Java and itself: beside the data, or (in memory) in the temp dir, by port. */
const pidFileOf = (port: number, dataDir?: string) =>
  dataDir === undefined ? join(tmpdir(), `partner-payments-dynamodb-local-${port}.pid`) : join(dataDir, 'dynamodb-local.pid');

/** The pid of a process that has exited: the owner of a run that was killed outright. */
const deadPid = () => spawnSync('true').pid;

/** Waits (up to 5 s) for a process to be gone: one whose parent died is reaped by init, not at once. */
const waitGone = async (pid: number) => {
  for (let waited = 0; isAlive(pid) && waited < 5_000; waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
  return !isAlive(pid);
};

const listTables = async (endpoint: string) => {
  const client = new DynamoDBClient({ endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 });
  try {
    return await client.send(new ListTablesCommand({}));
  } finally {
    client.destroy();
  }
};

describe('startDynamoDbLocal', () => {
  it('fails with JavaMissingError and what to install when java is not on the PATH', async () => {
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      const starting = startDynamoDbLocal({ port: await freePort() });

      await expect(starting).rejects.toThrow(JavaMissingError);
      await expect(starting).rejects.toThrow(/apt-get install -y default-jre-headless/);
    } finally {
      process.env.PATH = path;
    }
  });

  it('serves DynamoDB on the port, and stop() leaves no process and frees the port', async () => {
    // Arrange / Act
    const port = await freePort();
    const dynamo = await startDynamoDbLocal({ port });
    const listed = await listTables(dynamo.endpoint);
    const alive = isAlive(dynamo.pid);
    await dynamo.stop();

    // Assert
    expect(listed.TableNames).toEqual([]);
    expect(alive).toBe(true);
    expect(isAlive(dynamo.pid)).toBe(false);
    await expect(listTables(dynamo.endpoint)).rejects.toThrow();
  }, 60_000);

  it('reports a process that dies by itself (kill -9), and not one that stop() ended', async () => {
    const first = await startDynamoDbLocal({ port: await freePort() });
    const second = await startDynamoDbLocal({ port: await freePort() });
    const reported: string[] = [];
    try {
      void first.crashed.then((how) => reported.push(`first: ${how}`));
      void second.crashed.then((how) => reported.push(`second: ${how}`));

      process.kill(first.pid, 'SIGKILL');
      await second.stop();
      await first.stop();
      // The first's report, the event that must come; the second's, had it come, came with its exit, which its
      // stop() had seen before it returned.
      await first.crashed;

      expect(reported).toEqual(['first: signal SIGKILL']);
      expect(isAlive(first.pid)).toBe(false);
    } finally {
      await Promise.all([first.stop(), second.stop()]);
    }
  }, 60_000);

  it('refuses a port that is taken before starting Java, naming the setting, and leaves no process', async () => {
    const squatter = createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => squatter.listen(port, '0.0.0.0', resolve));
    try {
      await expect(startDynamoDbLocal({ port })).rejects.toThrow(/Port \d+ \(DYNAMODB_LOCAL_PORT\) is already in use/);
      expect(execFileSync('ps', ['-eo', 'args='], { encoding: 'utf8' })).not.toContain(`-port ${port}`);
    } finally {
      squatter.close();
    }
  }, 60_000);

  it('records its Java and itself in a pid file (beside the data, or in the temp dir by port), and removes it on stop', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ddb-pid-file-'));
    const onDisk = await startDynamoDbLocal({ port: await freePort(), dataDir });
    const inMemory = await startDynamoDbLocal({ port: await freePort() });
    try {
      expect(readFileSync(pidFileOf(onDisk.port, dataDir), 'utf8').trim()).toBe(`${onDisk.pid} ${process.pid}`);
      expect(readFileSync(pidFileOf(inMemory.port), 'utf8').trim()).toBe(`${inMemory.pid} ${process.pid}`);
    } finally {
      await Promise.all([onDisk.stop(), inMemory.stop()]);
      rmSync(dataDir, { recursive: true, force: true });
    }
    expect(existsSync(pidFileOf(onDisk.port, dataDir))).toBe(false);
    expect(existsSync(pidFileOf(inMemory.port))).toBe(false);
  }, 60_000);

  const leftBehindCases = [
    { mode: 'the same data', inMemory: false, record: (java: number) => `${java} ${deadPid()}` },
    { mode: 'in memory', inMemory: true, record: (java: number) => `${java} ${deadPid()}` },
    { mode: 'the same data, its pid file in the one-number format of older runs (no owner)', inMemory: false, record: (java: number) => `${java}` },
  ];
  it.each(leftBehindCases)('stops the DynamoDB Local a killed run left serving $mode, then starts its own on that port', async ({ inMemory, record }) => {
    // Arrange: a run that was killed outright (its stop never ran, its node is gone) left Java holding the port.
    // This process started it, so the pid file names a dead owner instead, as the killed run's would.
    const dataDir = inMemory ? undefined : mkdtempSync(join(tmpdir(), 'ddb-left-behind-'));
    const port = await freePort();
    const leftBehind = await startDynamoDbLocal({ port, dataDir });
    writeFileSync(pidFileOf(port, dataDir), record(leftBehind.pid));

    let next: Awaited<ReturnType<typeof startDynamoDbLocal>> | undefined;
    try {
      // Act
      next = await startDynamoDbLocal({ port, dataDir });

      // Assert
      expect(await waitGone(leftBehind.pid)).toBe(true);
      await expect(listTables(next.endpoint)).resolves.toBeDefined();
      expect(readFileSync(pidFileOf(port, dataDir), 'utf8').trim()).toBe(`${next.pid} ${process.pid}`);
    } finally {
      await next?.stop();
      await leftBehind.stop();
      if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('leaves a Java whose owner is alive (another running service on that data), and refuses the port', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ddb-owned-'));
    const port = await freePort();
    const owned = await startDynamoDbLocal({ port, dataDir });
    try {
      const second = startDynamoDbLocal({ port, dataDir });
      void second.then((started) => started.stop(), () => undefined); // should it start, it must not outlive the test
      await expect(second).rejects.toThrow(/already in use/);
      expect(isAlive(owned.pid)).toBe(true);
      expect(readFileSync(pidFileOf(port, dataDir), 'utf8').trim()).toBe(`${owned.pid} ${process.pid}`);
    } finally {
      await owned.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('never adopts a DynamoDB that already answers on its port, nor stops it while its owner (here, this process) is alive', async () => {
    const foreign = await startDynamoDbLocal({ port: await freePort() });
    try {
      await expect(startDynamoDbLocal({ port: foreign.port })).rejects.toThrow(/already in use/);
      expect(isAlive(foreign.pid)).toBe(true);
    } finally {
      await foreign.stop();
    }
  }, 60_000);

  it('SIGKILLs its Java when node exits by an uncaught exception (a last resort: Java is in its own process group)', async () => {
    // Arrange: a node process that starts DynamoDB Local, says its pid, then throws
    const port = await freePort();
    const script = [
      "const { startDynamoDbLocal } = await import('./infra/local/runtime/dynamodb-local.ts');",
      `const dynamo = await startDynamoDbLocal({ port: ${port} });`,
      "console.log(`java ${dynamo.pid}`);",
      "setTimeout(() => { throw new Error('boom'); }, 0);",
    ].join('\n');
    const node = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    node.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    node.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));

    // Act
    const code = await new Promise<number | null>((resolve) => node.once('close', resolve));
    const java = Number(/java (\d+)/.exec(output)?.[1]);
    try {
      // Assert: it died of the error, and took Java (and its pid file) with it
      expect(output).toContain('boom');
      expect(code).toBe(1);
      expect(java).toBeGreaterThan(0);
      expect(await waitGone(java)).toBe(true);
      expect(existsSync(pidFileOf(port))).toBe(false);
    } finally {
      if (java > 0 && isAlive(java) && execFileSync('ps', ['-o', 'args=', '-p', String(java)], { encoding: 'utf8' }).includes(`-port ${port}`)) {
        process.kill(java, 'SIGKILL');
      }
      rmSync(pidFileOf(port), { force: true });
    }
  }, 60_000);
});

describe('startSupervisedDynamoDbLocal', () => {
  it('starts Java again on the same port when it dies by itself, and prepares it again (an in-memory table is gone)', async () => {
    // Arrange
    const prepared: string[] = [];
    const dynamo = await startSupervisedDynamoDbLocal({ port: await freePort(), prepare: async (endpoint) => void prepared.push(endpoint) });
    const firstPid = dynamo.pid;
    try {
      // Act
      process.kill(firstPid, 'SIGKILL');
      const deadline = Date.now() + 30_000;
      while (dynamo.pid === firstPid && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));

      // Assert
      expect(dynamo.pid).not.toBe(firstPid);
      expect(prepared).toEqual([dynamo.endpoint, dynamo.endpoint]);
      expect((await listTables(dynamo.endpoint)).TableNames).toEqual([]);
    } finally {
      await dynamo.stop();
    }
    expect(isAlive(dynamo.pid)).toBe(false);
  }, 60_000);

  it('reports a restart that fails through `failed`, saying what happened', async () => {
    // (the restart fails in its preparation: deterministic, where a port taken between the crash and the restart
    // would race the restart itself; a taken port is refused with its own message, tested above)
    const prepared: string[] = [];
    const dynamo = await startSupervisedDynamoDbLocal({
      port: await freePort(),
      prepare: async (endpoint) => {
        prepared.push(endpoint);
        if (prepared.length > 1) throw new Error('the table could not be created');
      },
    });
    const firstPid = dynamo.pid;
    try {
      process.kill(firstPid, 'SIGKILL');

      const failure = await dynamo.failed;

      expect(failure.message).toMatch(/DynamoDB Local exited unexpectedly \(signal SIGKILL\) and could not be restarted: the table could not be created/);
      expect(prepared).toHaveLength(2);
    } finally {
      await dynamo.stop();
    }
    expect(isAlive(firstPid)).toBe(false);
  }, 60_000);
});
