/** The DynamoDB health check against the integration run's DynamoDB Local, and against nothing at all. */
import { describe, expect, it } from '@jest/globals';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { dynamoClient, tableName } from '../../../lib/store/dynamo';
import { tableCheck } from '../../../lib/store/health';
import { freePort } from '../../support/ports';

const signal = () => AbortSignal.timeout(2_000);

describe('the DynamoDB check', () => {
  it('passes while the table answers', async () => {
    await expect(tableCheck(dynamoClient, tableName)(signal())).resolves.toBeUndefined();
  });

  it('fails when the table does not exist (a DynamoDB Local restarted in memory, before the table is back)', async () => {
    await expect(tableCheck(dynamoClient, 'no-such-table')(signal())).rejects.toThrow();
  });

  it('fails, quickly, when nothing listens at the endpoint', async () => {
    const client = new DynamoDBClient({
      endpoint: `http://127.0.0.1:${await freePort()}`,
      region: 'local',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    const startedAt = Date.now();
    try {
      await expect(tableCheck(client, tableName)(signal())).rejects.toThrow();
    } finally {
      client.destroy();
    }
    expect(Date.now() - startedAt).toBeLessThan(2_500);
  });
});
