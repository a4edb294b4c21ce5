/**
 * Starts DynamoDB Local once for the whole integration run (in memory, on a free port) and creates the table.
 * The environment set here is inherited by the test workers, so `lib/config.ts` points every repository at it.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { startDynamoDbLocal, type DynamoDbLocal } from '../../infra/local/dynamodb-local';
import { ensureTable } from '../../lib/store/table';
import { freePort } from '../support/ports';

declare global {
  var __DYNAMODB_LOCAL__: DynamoDbLocal | undefined;
}

export default async function globalSetup(): Promise<void> {
  const port = await freePort();
  const dynamo = await startDynamoDbLocal({ port });
  globalThis.__DYNAMODB_LOCAL__ = dynamo;
  process.env.DYNAMODB_LOCAL_PORT = String(port);
  process.env.DYNAMODB_ENDPOINT = dynamo.endpoint;
  process.env.TABLE_NAME = 'partner-payments-test';
  // The local key-encryption key file (lib/secrets) of this run.
  process.env.LOCAL_DATA_DIR = mkdtempSync(join(tmpdir(), 'partner-payments-test-'));
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
