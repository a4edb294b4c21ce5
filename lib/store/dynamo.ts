/**
 * The DynamoDB clients of this process, created once. Locally they point at DynamoDB Local with fixed
 * credentials (so the SDK never probes for real ones); in AWS they use the function's role.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '../config';

export const dynamoClient = new DynamoDBClient(
  config.DYNAMODB_ENDPOINT === undefined
    ? { region: config.AWS_REGION }
    : {
        region: config.AWS_REGION,
        endpoint: config.DYNAMODB_ENDPOINT,
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      },
);

export const documentClient = DynamoDBDocumentClient.from(dynamoClient, {
  marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
});

export const tableName = config.TABLE_NAME;
