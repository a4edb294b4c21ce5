/**
 * Composes the local runtime from its parts so that `npm start` and the integration tests start the same
 * thing. Each part is stopped in reverse order of starting.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ensureTable } from '../../lib/store/table';
import { startDynamoDbLocal } from './dynamodb-local';
import { startHttpApi } from './http-api';
import { startProcessorSandbox } from './processor-sandbox';

export interface LocalRuntimeOptions {
  httpPort: number;
  dynamoPort: number;
  /** `undefined`: DynamoDB Local keeps its data in memory. */
  dataDir: string | undefined;
  tableName: string;
  processor: { port: number; secretKey: string; webhookSecret: string };
}

export interface LocalRuntime {
  apiUrl: string;
  processorUrl: string;
  dynamoEndpoint: string;
  dynamoPid: number;
  stop(): Promise<void>;
}

export async function startLocalRuntime(options: LocalRuntimeOptions): Promise<LocalRuntime> {
  const stops: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const stopPart of stops.reverse()) await stopPart().catch((error: unknown) => console.error(error));
    stops.length = 0;
  };
  try {
    const dynamo = await startDynamoDbLocal({ port: options.dynamoPort, dataDir: options.dataDir });
    stops.push(dynamo.stop);
    const client = new DynamoDBClient({
      endpoint: dynamo.endpoint,
      region: 'local',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    try {
      await ensureTable(client, options.tableName);
    } finally {
      client.destroy();
    }
    const api = await startHttpApi({ port: options.httpPort });
    stops.push(api.close);
    // Events go to the processor webhook endpoint; until it answers 2xx the sandbox retries, as Stripe does.
    const processor = await startProcessorSandbox({
      port: options.processor.port,
      secretKey: options.processor.secretKey,
      webhookSecret: options.processor.webhookSecret,
      webhookUrl: `${api.url}/api/v1/webhooks/processor`,
    });
    stops.push(processor.close);
    return { apiUrl: api.url, processorUrl: processor.url, dynamoEndpoint: dynamo.endpoint, dynamoPid: dynamo.pid, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
