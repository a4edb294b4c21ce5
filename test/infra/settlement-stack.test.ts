/**
 * The settlement schedule in AWS: the scheduled run's function (functions/settlement-scheduled.ts), its
 * least-privilege table access, the EventBridge rule from the deploy-time settings, and the alarm on its errors; the
 * continuation (functions/settlement-continuation.ts): its queue and dead-letter queue (stateful stack), its event
 * source, its grants and its alarms, and which functions of the whole app may send to the queue.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import {
  adminAuthSettings,
  alarmEmailSetting,
  apiThrottleSettings,
  processorWebhookConcurrencySetting,
  railSettings,
  settlementSettings,
  stageSetting,
} from '../../infra/aws/deploy-settings';
import { METRICS_NAMESPACE } from '../../infra/aws/observability';
import { addServiceStacks } from '../../infra/aws/service-stacks';
import { SettlementStack } from '../../infra/aws/settlement-stack';
import { StatefulStack } from '../../infra/aws/stateful-stack';
import { SETTLEMENT_CONTINUATIONS } from '../../infra/shared/settlement-continuation';
import { consoleDistFixture } from '../support/console-dist';

/** The stateful and settlement stacks of an app with these context values (`npx cdk synth -c key=value`). */
function settlementTemplates(context: Record<string, string> = {}): { stateful: Template; settlement: Template } {
  const app = new App({ context });
  const stateful = new StatefulStack(app, 'Stateful');
  const stack = new SettlementStack(app, 'Settlement', {
    table: stateful.table,
    secretsKey: stateful.secretsKey,
    settlement: settlementSettings(app),
    settlementQueue: stateful.settlementQueue,
    settlementDeadLetters: stateful.settlementDeadLetters,
    alarmTopic: stateful.alarmTopic,
  });
  return { stateful: Template.fromStack(stateful), settlement: Template.fromStack(stack) };
}

type Statement = { Effect: string; Action: string | string[]; Resource: unknown };

let stateful: Template;
let settlement: Template;

beforeAll(() => {
  ({ stateful, settlement } = settlementTemplates());
}, 120_000);

/** The logical id of the function built from `functions/<name>.ts`. */
function functionId(template: Template, name = 'settlement-scheduled'): string {
  const ids = Object.keys(template.findResources('AWS::Lambda::Function')).filter((id) => new RegExp(`^Fn${name.replace(/-/g, '')}[A-F0-9]{8}$`).test(id));
  expect(ids).toHaveLength(1);
  return ids[0] ?? '';
}

/** The statements of that function's role policy. */
function statements(name = 'settlement-scheduled'): Statement[] {
  const prefix = `Fn${name.replace(/-/g, '')}ServiceRoleDefaultPolicy`;
  return Object.entries(settlement.findResources('AWS::IAM::Policy'))
    .filter(([logicalId]) => logicalId.startsWith(prefix))
    .flatMap(([, policy]) => policy.Properties.PolicyDocument.Statement as Statement[]);
}

const serviceActions = (name: string, service: string) =>
  statements(name)
    .flatMap((statement) => [statement.Action].flat())
    .filter((action) => action.startsWith(`${service}:`))
    .sort();

/** The logical id of the stateful stack's queue whose id starts with `prefix`. */
function queueId(prefix: string): string {
  const ids = Object.keys(stateful.findResources('AWS::SQS::Queue')).filter((id) => id.startsWith(prefix));
  expect(ids).toHaveLength(1);
  return ids[0] ?? '';
}

const runs = ['settlement-scheduled', 'settlement-continuation'];

describe('settlement stack', () => {
  it('runs the scheduled settlement as one Node 22 function: 15 minutes, never two at once, with the default cutoff', () => {
    const fn = settlement.findResources('AWS::Lambda::Function')[functionId(settlement)];

    expect(fn?.Properties).toMatchObject({
      Runtime: 'nodejs22.x',
      Timeout: 900,
      ReservedConcurrentExecutions: 1,
      TracingConfig: { Mode: 'Active' },
      Environment: {
        Variables: {
          SVC_RUNTIME: 'aws',
          TABLE_NAME: expect.anything(),
          KMS_KEY_ID: expect.anything(),
          SETTLEMENT_CUTOFF: 'day_boundary',
          SETTLEMENT_QUEUE_URL: { 'Fn::ImportValue': expect.stringContaining('SettlementContinuationQueue') },
        },
      },
    });
    // It calls no rail: no rail secret, no rail URL.
    expect(Object.keys(fn?.Properties.Environment.Variables as object).filter((name) => name.startsWith('RAIL'))).toEqual([]);
  });

  it.each(runs)('lets %s query the table’s indexes, read items (also in batches), write batches’ contents many at a time and commit them in transactions, but never scan or delete', (name) => {
    // Arrange
    const dynamo = statements(name).filter((statement) => [statement.Action].flat().some((action) => action.startsWith('dynamodb:')));
    const actions = dynamo.flatMap((statement) => [statement.Action].flat()).sort();

    // Assert
    // BatchGetItem: a run reads the transactions its adjustments reverse in one call (lib/store/settlements.ts);
    // BatchWriteItem: it puts a batch's contents beside it in chunks (the table's `settle` access).
    expect(actions).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:BatchWriteItem',
      'dynamodb:ConditionCheckItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:Query',
      'dynamodb:UpdateItem',
    ]);
    expect(actions.filter((action) => /^dynamodb:(Scan|DeleteItem)$/.test(action))).toEqual([]);
    // The partners (gsi1) and the settlement index (gsi3) are indexes of the table
    expect(JSON.stringify(dynamo.map((statement) => statement.Resource))).toContain('/index/*');
  });

  it.each(runs)('gives %s no secret and no key: it opens nothing sealed and calls no rail', (name) => {
    const actions = statements(name).flatMap((statement) => [statement.Action].flat());

    expect(actions.filter((action) => /^(secretsmanager|kms):/.test(action))).toEqual([]);
  });

  it('runs it daily at 01:00 UTC by default, retrying a failed delivery briefly (a run is idempotent)', () => {
    settlement.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'cron(0 1 * * ? *)',
      State: 'ENABLED',
      Targets: [
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [functionId(settlement), 'Arn'] },
          RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 3600 },
        }),
      ],
    });
    settlement.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: functionId(settlement) },
      MaximumRetryAttempts: 2,
      MaximumEventAgeInSeconds: 3600,
    });
  });

  it('grants no wildcard action', () => {
    const actions = Object.values(settlement.findResources('AWS::IAM::Policy')).flatMap((policy) =>
      (policy.Properties.PolicyDocument.Statement as Statement[]).flatMap((statement) => [statement.Action].flat()),
    );

    expect(actions.length).toBeGreaterThan(0);
    for (const action of actions) expect(action).not.toMatch(/(^|:)\*$/);
  });

  it('alarms on any error of the scheduled run', () => {
    settlement.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: functionId(settlement) } }],
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      AlarmActions: [{ 'Fn::ImportValue': Match.stringLikeRegexp('AlarmTopic') }],
    });
  });

  it('alarms on a merchant owing money for more than 7 days, on the metric the scheduled run emits', () => {
    settlement.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: METRICS_NAMESPACE,
      MetricName: 'MerchantsOwingOver7Days',
      Dimensions: [{ Name: 'service', Value: 'partner-payments' }],
      Statistic: 'Maximum',
      Period: 86_400,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      AlarmActions: [{ 'Fn::ImportValue': Match.stringLikeRegexp('AlarmTopic') }],
    });
  });

  it('takes the schedule and the cutoff from the deploy-time context', () => {
    // Act
    const custom = settlementTemplates({ settlementSchedule: 'rate(6 hours)', settlementCutoff: 'now' }).settlement;

    // Assert
    custom.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(6 hours)' });
    expect(custom.findResources('AWS::Lambda::Function')[functionId(custom)]?.Properties.Environment.Variables.SETTLEMENT_CUTOFF).toBe('now');
  }, 120_000);
});

describe('settlement continuation', () => {
  it('has its own queue in the stateful stack: encrypted, invisible 6 × the consumer’s timeout once received, redriven after 3 receives to an encrypted dead-letter queue', () => {
    const queue = stateful.findResources('AWS::SQS::Queue')[queueId('SettlementContinuationQueue')];

    expect(SETTLEMENT_CONTINUATIONS).toMatchObject({ visibilityTimeoutSeconds: 5400, maxReceiveCount: 3, consumerTimeoutSeconds: 900 });
    expect(queue?.Properties).toMatchObject({
      VisibilityTimeout: 5400,
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [queueId('SettlementContinuationDeadLetters'), 'Arn'] }, maxReceiveCount: 3 },
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: SETTLEMENT_CONTINUATIONS.retentionDays * 24 * 3600,
    });
    expect(stateful.findResources('AWS::SQS::Queue')[queueId('SettlementContinuationDeadLetters')]).toMatchObject({
      Properties: { SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 24 * 3600 },
      DeletionPolicy: 'Retain',
    });
    // Only TLS to either
    for (const id of [queueId('SettlementContinuationQueue'), queueId('SettlementContinuationDeadLetters')]) {
      stateful.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: id }],
        PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
      });
    }
  });

  it('runs each continuation as a Node 22 function of its own: 15 minutes, the table, the key id and the queue URL', () => {
    const fn = settlement.findResources('AWS::Lambda::Function')[functionId(settlement, 'settlement-continuation')];

    expect(fn?.Properties).toMatchObject({
      Runtime: 'nodejs22.x',
      Timeout: SETTLEMENT_CONTINUATIONS.consumerTimeoutSeconds,
      TracingConfig: { Mode: 'Active' },
      Environment: {
        Variables: {
          SVC_RUNTIME: 'aws',
          TABLE_NAME: expect.anything(),
          KMS_KEY_ID: expect.anything(),
          SETTLEMENT_QUEUE_URL: { 'Fn::ImportValue': expect.stringContaining('SettlementContinuationQueue') },
        },
      },
    });
    expect(Object.keys(fn?.Properties.Environment.Variables as object).filter((name) => name.startsWith('RAIL'))).toEqual([]);
    // The visibility timeout leaves a received message alone while its continuation runs
    expect(stateful.findResources('AWS::SQS::Queue')[queueId('SettlementContinuationQueue')]?.Properties.VisibilityTimeout).toBeGreaterThanOrEqual(
      6 * (fn?.Properties.Timeout as number),
    );
  });

  it('feeds it from the continuation queue one message at a time, at most two at once', () => {
    const mappings = Object.values(settlement.findResources('AWS::Lambda::EventSourceMapping'));

    expect(mappings).toHaveLength(1);
    expect(mappings[0]?.Properties).toMatchObject({
      FunctionName: { Ref: functionId(settlement, 'settlement-continuation') },
      EventSourceArn: { 'Fn::ImportValue': expect.stringContaining('SettlementContinuationQueue') },
      BatchSize: 1,
      ScalingConfig: { MaximumConcurrency: 2 },
    });
    // One message per batch: a failure is the whole batch's, nothing partial to report
    expect(mappings[0]?.Properties.FunctionResponseTypes).toBeUndefined();
  });

  it('lets the continuation consume the queue and send the next continuation; the scheduled run only send', () => {
    expect(serviceActions('settlement-continuation', 'sqs')).toEqual(
      expect.arrayContaining(['sqs:SendMessage', 'sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:ChangeMessageVisibility']),
    );
    expect(serviceActions('settlement-scheduled', 'sqs')).toContain('sqs:SendMessage');
    expect(serviceActions('settlement-scheduled', 'sqs').filter((action) => /^sqs:(ReceiveMessage|DeleteMessage|ChangeMessageVisibility)$/.test(action))).toEqual([]);
  });

  it('alarms on any error of a continuation', () => {
    settlement.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: functionId(settlement, 'settlement-continuation') } }],
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      AlarmActions: [{ 'Fn::ImportValue': Match.stringLikeRegexp('AlarmTopic') }],
    });
  });

  it('alarms on any dead-lettered continuation, notifying the alarm topic', () => {
    settlement.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Namespace: 'AWS/SQS',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::ImportValue': Match.stringLikeRegexp(queueId('SettlementContinuationDeadLetters')) } }],
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      AlarmActions: [{ 'Fn::ImportValue': Match.stringLikeRegexp('AlarmTopic') }],
    });
  });
});

describe('settlement continuation queue in the whole app', () => {
  type Fn = { Properties: { Environment?: { Variables?: Record<string, unknown> } } };
  let templates: Template[];

  beforeAll(() => {
    // Who may send is a matter of grants, not of code: no bundling.
    const app = new App({ context: { stage: 'dev', 'aws:cdk:bundling-stacks': [] } });
    templates = Object.values(addServiceStacks(app, { consoleDist: consoleDistFixture() })).map((stack) => Template.fromStack(stack));
  }, 120_000);

  /** The function name a role policy's logical id (`Fn<name>ServiceRoleDefaultPolicy…`) or a function's (`Fn<name>…`) belongs to, without its dashes. */
  const functionOf = (logicalId: string) => /^Fn(.+?)(ServiceRoleDefaultPolicy)?[A-F0-9]{8}$/.exec(logicalId)?.[1] ?? logicalId;
  const expected = ['adminsettlementsrun', 'settlementcontinuation', 'settlementscheduled', 'settlementsrun'];

  it('lets only the four functions that run settlement send to it', () => {
    const senders = templates.flatMap((template) =>
      Object.entries(template.findResources('AWS::IAM::Policy'))
        .filter(([, policy]) =>
          (policy.Properties.PolicyDocument.Statement as Statement[]).some(
            (statement) => [statement.Action].flat().includes('sqs:SendMessage') && JSON.stringify(statement.Resource).includes('SettlementContinuationQueue'),
          ),
        )
        .map(([logicalId]) => functionOf(logicalId)),
    );

    expect(senders.sort()).toEqual(expected);
  });

  it('gives only them its URL', () => {
    const withUrl = templates.flatMap((template) =>
      Object.entries(template.findResources('AWS::Lambda::Function'))
        .filter(([, fn]) => (fn as Fn).Properties.Environment?.Variables?.SETTLEMENT_QUEUE_URL !== undefined)
        .map(([logicalId]) => functionOf(logicalId)),
    );

    expect(withUrl.sort()).toEqual(expected);
  });
});

describe('deploy-time settlement settings', () => {
  const scheduleOf = (settlementSchedule: string) => settlementSettings(new App({ context: { settlementSchedule } })).schedule.expressionString;

  it('accepts EventBridge rate and cron expressions', () => {
    expect(settlementSettings(new App()).schedule.expressionString).toBe('cron(0 1 * * ? *)');
    expect(scheduleOf('rate(1 hour)')).toBe('rate(1 hour)');
    expect(scheduleOf(' rate(30 minutes) ')).toBe('rate(30 minutes)');
    expect(scheduleOf('cron(0/15 * * * ? *)')).toBe('cron(0/15 * * * ? *)');
    expect(scheduleOf('cron(0 1 ? * MON-FRI *)')).toBe('cron(0 1 ? * MON-FRI *)');
    expect(scheduleOf('cron(30 23 L * ? 2026-2030)')).toBe('cron(30 23 L * ? 2026-2030)');
    expect(scheduleOf('cron(0 6 ? JAN,JUL 2#1 *)')).toBe('cron(0 6 ? JAN,JUL 2#1 *)');
  });

  it.each([
    ['every day', /settlementSchedule/],
    ['rate(5 minute)', /rate\(5 minutes\)/],
    ['rate(30 seconds)', /minute/],
    ['rate(0 hours)', /settlementSchedule/],
    ['cron(0 1 * * *)', /6 fields/],
    ['cron(0 1 * * * *)', /\?/],
    ['cron(0 1 ? * ? *)', /\?/],
    ['cron(0 25 * * ? *)', /hours/],
    ['cron(60 1 * * ? *)', /minutes/],
    ['cron(0 1 32 * ? *)', /day-of-month/],
    ['cron(0 1 ? * FUNDAY *)', /day-of-week/],
    ['cron(0 1 * * ? 1969)', /year/],
  ])('refuses the schedule %s at synth, saying what is wrong', (expression, reason) => {
    expect(() => scheduleOf(expression)).toThrow(/settlementSchedule/);
    expect(() => scheduleOf(expression)).toThrow(reason);
  });

  it('refuses a cutoff other than day_boundary or now', () => {
    expect(settlementSettings(new App({ context: { settlementCutoff: 'now' } })).cutoff).toBe('now');
    expect(settlementSettings(new App()).cutoff).toBe('day_boundary');
    expect(() => settlementSettings(new App({ context: { settlementCutoff: 'midnight' } }))).toThrow(/settlementCutoff/);
  });
});

describe('deploy-time stage, alarm and throttle settings', () => {
  it('takes the stage from the context, required, and refuses any other', () => {
    expect(() => stageSetting(new App())).toThrow('context stage: required, -c stage=dev or -c stage=prod');
    expect(stageSetting(new App({ context: { stage: 'dev' } }))).toBe('dev');
    expect(stageSetting(new App({ context: { stage: 'prod' } }))).toBe('prod');
    expect(() => stageSetting(new App({ context: { stage: 'production' } }))).toThrow(/context stage: expected dev or prod/);
  });

  it('takes an alarm email, refusing what is not an address', () => {
    expect(alarmEmailSetting(new App())).toBeUndefined();
    expect(alarmEmailSetting(new App({ context: { alarmEmail: 'oncall@example.com' } }))).toBe('oncall@example.com');
    expect(() => alarmEmailSetting(new App({ context: { alarmEmail: 'oncall' } }))).toThrow(/alarmEmail/);
  });

  it('throttles at 100 requests per second with bursts of 200 by default, and refuses a burst below the rate', () => {
    expect(apiThrottleSettings(new App())).toEqual({ rateLimit: 100, burstLimit: 200 });
    expect(apiThrottleSettings(new App({ context: { apiThrottleRate: '500' } }))).toEqual({ rateLimit: 500, burstLimit: 500 });
    expect(apiThrottleSettings(new App({ context: { apiThrottleRate: '50', apiThrottleBurst: '80' } }))).toEqual({ rateLimit: 50, burstLimit: 80 });
    expect(() => apiThrottleSettings(new App({ context: { apiThrottleRate: '0' } }))).toThrow(/apiThrottleRate/);
    expect(() => apiThrottleSettings(new App({ context: { apiThrottleRate: '100', apiThrottleBurst: '10' } }))).toThrow(/apiThrottleBurst/);
  });
});

describe('deploy-time admin token settings', () => {
  const ADMIN_AUTH = {
    adminJwksUrl: 'https://issuer.example/.well-known/jwks.json',
    adminJwtIssuer: 'https://issuer.example/',
    adminJwtAudience: 'partner-payments-admin',
  };

  it('takes all three in either stage', () => {
    for (const stage of ['dev', 'prod'] as const) {
      expect(adminAuthSettings(new App({ context: ADMIN_AUTH }), stage)).toEqual({
        jwksUrl: 'https://issuer.example/.well-known/jwks.json',
        issuer: 'https://issuer.example/',
        audience: 'partner-payments-admin',
      });
    }
  });

  it('refuses prod without them, naming each missing key (an admin API that refuses to start is no production deploy)', () => {
    expect(() => adminAuthSettings(new App(), 'prod')).toThrow('context adminJwksUrl, adminJwtIssuer, adminJwtAudience: required for stage prod');
    const { adminJwtAudience: _left, ...twoOfThree } = ADMIN_AUTH;
    expect(() => adminAuthSettings(new App({ context: { ...twoOfThree, adminJwtIssuer: ' ' } }), 'prod')).toThrow(
      'context adminJwtIssuer, adminJwtAudience: required for stage prod',
    );
  });

  it('leaves dev without an admin API when one is missing (the app warns)', () => {
    expect(adminAuthSettings(new App(), 'dev')).toBeUndefined();
    expect(adminAuthSettings(new App({ context: { adminJwksUrl: ADMIN_AUTH.adminJwksUrl } }), 'dev')).toBeUndefined();
  });
});

describe('deploy-time processor webhook concurrency', () => {
  it('reserves 50 by default, or the positive integer given', () => {
    expect(processorWebhookConcurrencySetting(new App())).toBe(50);
    expect(processorWebhookConcurrencySetting(new App({ context: { processorWebhookConcurrency: '20' } }))).toBe(20);
  });

  it.each(['0', '-5', '2.5', 'fifty', ''])('refuses %j at synth, naming the setting', (value) => {
    expect(() => processorWebhookConcurrencySetting(new App({ context: { processorWebhookConcurrency: value } }))).toThrow(
      /context processorWebhookConcurrency: expected a positive integer/,
    );
  });
});

describe('deploy-time rail settings', () => {
  it('passes https base URLs, and leaves unset ones unset (that rail answers "not configured")', () => {
    expect(railSettings(new App({ context: { railAApiBase: 'https://rail-a.example/v1' } }))).toEqual({ railAApiBase: 'https://rail-a.example/v1', railBApiBase: undefined });
  });

  it('refuses a base URL that is not https: requests carry the rail’s API key', () => {
    expect(() => railSettings(new App({ context: { railBApiBase: 'http://rail-b.example' } }))).toThrow(/railBApiBase.*https/);
    expect(() => railSettings(new App({ context: { railAApiBase: 'not a url' } }))).toThrow(/railAApiBase/);
  });
});
