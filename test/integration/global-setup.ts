/**
 * Starts DynamoDB Local once for the whole integration run (in memory, on a free port) and creates the table.
 * The environment set here is inherited by the test workers, so `lib/config.ts` points every repository at it.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { startDynamoDbLocal, type DynamoDbLocal } from '../../infra/local/runtime/dynamodb-local';
import { startProcessorSandbox, type ProcessorSandbox } from '../../infra/local/sandbox/processor';
import { type RailsSandbox, SANDBOX_RAIL_KEYS, startRailsSandbox } from '../../infra/local/sandbox/rails';
import { ensureTable } from '../../lib/store/table';
import { freePort } from '../support/ports';

declare global {
  var __DYNAMODB_LOCAL__: DynamoDbLocal | undefined;
  var __PROCESSOR_SANDBOX__: ProcessorSandbox | undefined;
  var __RAILS_SANDBOX__: RailsSandbox | undefined;
}

/** The keys the service's local defaults use (lib/config.ts). */
export const SANDBOX_KEYS = { secretKey: 'sk_test_sandbox_local', publishableKey: 'pk_test_sandbox_local', webhookSecret: 'whsec_sandbox_local' };

export default async function globalSetup(): Promise<void> {
  const port = await freePort();
  const dynamo = await startDynamoDbLocal({ port });
  globalThis.__DYNAMODB_LOCAL__ = dynamo;
  process.env.DYNAMODB_LOCAL_PORT = String(port);
  process.env.DYNAMODB_ENDPOINT = dynamo.endpoint;
  process.env.TABLE_NAME = 'partner-payments-test';
  // The local key-encryption key file (lib/secrets) of this run.
  process.env.LOCAL_DATA_DIR = mkdtempSync(join(tmpdir(), 'partner-payments-test-'));
  // The sandbox processor every test's service talks to (through the real stripe SDK). Its events go nowhere
  // here (tests that need them start a sandbox of their own), and are not retried.
  const sandboxPort = await freePort();
  globalThis.__PROCESSOR_SANDBOX__ = await startProcessorSandbox({
    port: sandboxPort,
    ...SANDBOX_KEYS,
    webhookUrl: `http://127.0.0.1:${await freePort()}/unused`,
    retryDelaysMs: [],
  });
  process.env.PROCESSOR_SANDBOX_PORT = String(sandboxPort);
  process.env.PROCESSOR_API_BASE = globalThis.__PROCESSOR_SANDBOX__.url;
  // The sandbox rails every test's payouts go to (the service's local defaults point at RAILS_SANDBOX_PORT).
  const railsPort = await freePort();
  globalThis.__RAILS_SANDBOX__ = await startRailsSandbox({ port: railsPort, keys: SANDBOX_RAIL_KEYS });
  process.env.RAILS_SANDBOX_PORT = String(railsPort);
  // The webhook queue URL the service's SQS client sends to (lib/config.ts): a free port, never the 12113 of a
  // developer's own `npm start`. A test that starts the delivery pipeline with the service's handlers serves it.
  process.env.WEBHOOK_QUEUE_PORT = String(await freePort());
  const client = new DynamoDBClient({
    endpoint: dynamo.endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    await ensureTable(client, process.env.TABLE_NAME);
  } finally {
    client.destroy();
  }
}
