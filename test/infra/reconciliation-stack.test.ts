/**
 * The reconciliation with the processor in AWS (decisions.md §12): the sparse, sharded index it reads (gsi4, keys
 * only), the scheduled function and its EventBridge rule every 15 minutes, its least-privilege grants, and the alarms
 * on its errors and on any outcome it had to apply (a lost processor event).
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { METRICS_NAMESPACE } from '../../infra/aws/observability';
import { ReconciliationStack } from '../../infra/aws/reconciliation-stack';
import { StatefulStack } from '../../infra/aws/stateful-stack';

type Statement = { Effect: string; Action: string | string[]; Resource: unknown };

let stateful: Template;
let reconciliation: Template;

beforeAll(() => {
  const app = new App();
  const statefulStack = new StatefulStack(app, 'Stateful');
  const stack = new ReconciliationStack(app, 'Reconciliation', {
    table: statefulStack.table,
    secretsKey: statefulStack.secretsKey,
    processorSecret: statefulStack.processorSecret,
    alarmTopic: statefulStack.alarmTopic,
  });
  stateful = Template.fromStack(statefulStack);
  reconciliation = Template.fromStack(stack);
}, 120_000);

/** The logical id of the scheduled run's function. */
function functionId(): string {
  const ids = Object.keys(reconciliation.findResources('AWS::Lambda::Function')).filter((id) => /^Fnreconciliationscheduled[A-F0-9]{8}$/.test(id));
  expect(ids).toHaveLength(1);
  return ids[0] ?? '';
}

const statements = (): Statement[] =>
  Object.entries(reconciliation.findResources('AWS::IAM::Policy'))
    .filter(([logicalId]) => logicalId.startsWith('FnreconciliationscheduledServiceRoleDefaultPolicy'))
    .flatMap(([, policy]) => policy.Properties.PolicyDocument.Statement as Statement[]);

describe('reconciliation', () => {
  it('has the sparse reconciliation index on the table: gsi4, keys only', () => {
    stateful.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      GlobalSecondaryIndexes: Match.arrayWith([
        {
          IndexName: 'gsi4',
          KeySchema: [
            { AttributeName: 'gsi4pk', KeyType: 'HASH' },
            { AttributeName: 'gsi4sk', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'KEYS_ONLY' },
        },
      ]),
    });
  });

  it('runs the reconciliation function every 15 minutes, one run at a time, with the processor keys', () => {
    const fn = reconciliation.findResources('AWS::Lambda::Function')[functionId()];

    expect(fn?.Properties).toMatchObject({
      Runtime: 'nodejs22.x',
      Timeout: 300,
      ReservedConcurrentExecutions: 1,
      Environment: { Variables: { SVC_RUNTIME: 'aws', TABLE_NAME: expect.anything(), KMS_KEY_ID: expect.anything(), PROCESSOR_SECRET_ARN: expect.anything() } },
    });
    reconciliation.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(15 minutes)',
      State: 'ENABLED',
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [functionId(), 'Arn'] } })],
    });
  });

  it('lets it query the reconciliation index and the table only, write as the processor webhook does, never scan, delete or batch-write', () => {
    // Arrange
    const dynamo = statements().filter((statement) => [statement.Action].flat().some((action) => action.startsWith('dynamodb:')));
    const actions = dynamo.flatMap((statement) => [statement.Action].flat()).sort();
    const queried = JSON.stringify(dynamo.filter((statement) => [statement.Action].flat().includes('dynamodb:Query')).map((statement) => statement.Resource));

    // Assert
    expect(actions).toEqual(['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem']);
    expect(queried).toContain('/index/gsi4');
    expect(queried).not.toContain('/index/*');
    expect(queried).not.toMatch(/\/index\/gsi[123]/);
    // Its secrets: the processor keys only (read), no rail key, no decrypt of the sealed secrets
    const others = statements().flatMap((statement) => [statement.Action].flat()).filter((action) => /^(secretsmanager|kms):/.test(action));
    expect([...new Set(others)].sort()).toEqual(['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue']);
  });

  it('alarms on any outcome it applied (a processor event was lost) and on its errors', () => {
    reconciliation.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: METRICS_NAMESPACE,
      MetricName: 'ReconciliationFixed',
      Dimensions: [{ Name: 'service', Value: 'partner-payments' }],
      Statistic: 'Sum',
      Period: 900,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      AlarmActions: [{ 'Fn::ImportValue': Match.stringLikeRegexp('AlarmTopic') }],
    });
    reconciliation.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: functionId() } }],
      Threshold: 1,
      AlarmActions: [{ 'Fn::ImportValue': Match.stringLikeRegexp('AlarmTopic') }],
    });
  });

  it('alarms when the reconciliation falls behind: a look due for over an hour at a run\'s start', () => {
    reconciliation.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: METRICS_NAMESPACE,
      MetricName: 'ReconciliationOldestDueAgeSeconds',
      Dimensions: [{ Name: 'service', Value: 'partner-payments' }],
      Statistic: 'Maximum',
      Period: 900,
      Threshold: 3600,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      AlarmActions: [{ 'Fn::ImportValue': Match.stringLikeRegexp('AlarmTopic') }],
    });
  });
});
