/** The DynamoDB Local launcher on this machine's Java: real processes, real ports. */
import { describe, expect, it } from '@jest/globals';
import { ListTablesCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JavaMissingError, startDynamoDbLocal, startSupervisedDynamoDbLocal } from '../../infra/local/dynamodb-local';
import { freePort } from '../support/ports';

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
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
      await new Promise((resolve) => setTimeout(resolve, 100));

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

  it('stops the DynamoDB Local a killed run left serving the same data, then starts its own on that data', async () => {
    // Arrange: a run that was killed outright (its stop never ran) left Java serving the data directory
    const dataDir = mkdtempSync(join(tmpdir(), 'ddb-left-behind-'));
    const port = await freePort();
    const leftBehind = await startDynamoDbLocal({ port, dataDir });

    // Act
    const next = await startDynamoDbLocal({ port, dataDir });
    try {
      // Assert
      expect(isAlive(leftBehind.pid)).toBe(false);
      await expect(listTables(next.endpoint)).resolves.toBeDefined();
    } finally {
      await next.stop();
      await leftBehind.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('never adopts a DynamoDB that already answers on its port (one a crashed run left behind)', async () => {
    const foreign = await startDynamoDbLocal({ port: await freePort() });
    try {
      await expect(startDynamoDbLocal({ port: foreign.port })).rejects.toThrow(/already in use/);
      expect(isAlive(foreign.pid)).toBe(true);
    } finally {
      await foreign.stop();
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

  it('reports a restart that fails (its port taken meanwhile) through `failed`, saying what happened', async () => {
    const port = await freePort();
    const dynamo = await startSupervisedDynamoDbLocal({ port, prepare: async () => undefined });
    const squatter = createServer();
    try {
      process.kill(dynamo.pid, 'SIGKILL');
      await new Promise((resolve) => setTimeout(resolve, 50));
      await new Promise<void>((resolve) => squatter.listen(port, '0.0.0.0', resolve));

      const failure = await dynamo.failed;

      expect(failure.message).toMatch(/DynamoDB Local exited unexpectedly \(signal SIGKILL\) and could not be restarted[\s\S]*already in use/);
    } finally {
      squatter.close();
      await dynamo.stop();
    }
  }, 60_000);
});
