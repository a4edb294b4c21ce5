/** The table's health check: one cheap control-plane read that needs no item key. */
import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { dynamoClient, tableName } from './dynamo';

/**
 * Passes while the table exists and is usable (ACTIVE, or UPDATING, which still serves reads and writes).
 * A DynamoDB Local that died, or came back in memory without its table, fails it.
 */
export const tableCheck =
  (client: Pick<DynamoDBClient, 'send'> = dynamoClient, name: string = tableName) =>
  async (signal: AbortSignal): Promise<void> => {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: name }), { abortSignal: signal });
    if (Table?.TableStatus !== 'ACTIVE' && Table?.TableStatus !== 'UPDATING') throw new Error(`table ${name} is ${Table?.TableStatus ?? 'missing'}`);
  };
