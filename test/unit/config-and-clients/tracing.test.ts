/**
 * Traces in AWS: every AWS SDK client the service creates goes through the Powertools tracer, and the
 * tracer patches Node's `https`, through which the Stripe SDK calls the processor; outside Lambda, nothing is
 * patched. Each case runs `test/support/traced-clients.ts` as a process of its own (the patch is process-wide).
 */
import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const script = fileURLToPath(new URL('../../support/traced-clients.ts', import.meta.url));

/** The settings of a deployed function (`infra/aws`), every secret and client configured. */
const deployed = {
  SVC_RUNTIME: 'aws',
  AWS_REGION: 'eu-west-1',
  TABLE_NAME: 'PartnerPayments',
  KMS_KEY_ID: 'arn:aws:kms:eu-west-1:111111111111:key/test',
  PROCESSOR_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:111111111111:secret:ProcessorKeys',
  RAILS_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:111111111111:secret:RailKeys',
  WEBHOOK_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/111111111111/deliveries',
  LOG_LEVEL: 'SILENT',
};

async function clientsIn(environment: Record<string, string>) {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(AWS_|_X_AMZN|LAMBDA_|DYNAMODB_|PROCESSOR_|RAIL|POWERTOOLS_)/.test(name)));
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', script], { env: { ...inherited, ...deployed, ...environment }, timeout: 60_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as { traced: string[]; dynamoInstrumented: boolean; httpsPatched: boolean };
}

describe('tracing', () => {
  it('in Lambda: traces the DynamoDB, SQS, KMS and both Secrets Manager clients, and the https calls of the Stripe SDK', async () => {
    const result = await clientsIn({ AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x', AWS_LAMBDA_FUNCTION_NAME: 'partner-payments-test' });

    expect(result).toEqual({
      traced: ['DynamoDBClient', 'KMSClient', 'SQSClient', 'SecretsManagerClient', 'SecretsManagerClient'],
      dynamoInstrumented: true,
      httpsPatched: true,
    });
  }, 60_000);

  it('outside Lambda: the same clients pass through the tracer untouched, and https is not patched', async () => {
    const result = await clientsIn({});

    expect(result.traced).toHaveLength(5);
    expect(result).toMatchObject({ dynamoInstrumented: false, httpsPatched: false });
  }, 60_000);
});
