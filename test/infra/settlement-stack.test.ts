/**
 * The settlement schedule in AWS: the scheduled run's function (functions/settlement-scheduled.ts), its
 * least-privilege table access, the EventBridge rule from the deploy-time settings, and the alarm on its errors.
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
import { SettlementStack } from '../../infra/aws/settlement-stack';
import { StatefulStack } from '../../infra/aws/stateful-stack';

/** The settlement stack of an app with these context values (`npx cdk synth -c key=value`). */
function settlementTemplate(context: Record<string, string> = {}): Template {
  const app = new App({ context });
  const stateful = new StatefulStack(app, 'Stateful');
  const stack = new SettlementStack(app, 'Settlement', {
    table: stateful.table,
    secretsKey: stateful.secretsKey,
    settlement: settlementSettings(app),
    alarmTopic: stateful.alarmTopic,
  });
  return Template.fromStack(stack);
}

type Statement = { Effect: string; Action: string | string[]; Resource: unknown };

let settlement: Template;

beforeAll(() => {
  settlement = settlementTemplate();
}, 120_000);

/** The logical id of the scheduled run's function. */
function functionId(template: Template): string {
  const ids = Object.keys(template.findResources('AWS::Lambda::Function')).filter((id) => /^Fnsettlementscheduled[A-F0-9]{8}$/.test(id));
  expect(ids).toHaveLength(1);
  return ids[0] ?? '';
}

/** The statements of the scheduled run's role policy. */
function statements(): Statement[] {
  return Object.entries(settlement.findResources('AWS::IAM::Policy'))
    .filter(([logicalId]) => logicalId.startsWith('FnsettlementscheduledServiceRoleDefaultPolicy'))
    .flatMap(([, policy]) => policy.Properties.PolicyDocument.Statement as Statement[]);
}

describe('settlement stack', () => {
  it('runs the scheduled settlement as one Node 22 function: 15 minutes, never two at once, with the default cutoff', () => {
    const fn = settlement.findResources('AWS::Lambda::Function')[functionId(settlement)];

    expect(fn?.Properties).toMatchObject({
      Runtime: 'nodejs22.x',
      Timeout: 900,
      ReservedConcurrentExecutions: 1,
      TracingConfig: { Mode: 'Active' },
      Environment: {
        Variables: { SVC_RUNTIME: 'aws', TABLE_NAME: expect.anything(), KMS_KEY_ID: expect.anything(), SETTLEMENT_CUTOFF: 'day_boundary' },
      },
    });
    // It calls no rail: no rail secret, no rail URL.
    expect(Object.keys(fn?.Properties.Environment.Variables as object).filter((name) => name.startsWith('RAIL'))).toEqual([]);
  });

  it('lets it query the table’s indexes, read items (also in batches) and write batches in transactions, but never scan, delete or batch-write', () => {
    // Arrange
    const dynamo = statements().filter((statement) => [statement.Action].flat().some((action) => action.startsWith('dynamodb:')));
    const actions = dynamo.flatMap((statement) => [statement.Action].flat()).sort();

    // Assert
    // BatchGetItem: a run reads the transactions its adjustments reverse in one call (lib/store/settlements.ts).
    expect(actions).toEqual(['dynamodb:BatchGetItem', 'dynamodb:ConditionCheckItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem']);
    expect(actions.filter((action) => /^dynamodb:(Scan|DeleteItem|BatchWriteItem)$/.test(action))).toEqual([]);
    // The partners (gsi1) and the settlement index (gsi3) are indexes of the table
    expect(JSON.stringify(dynamo.map((statement) => statement.Resource))).toContain('/index/*');
  });

  it('gives it no secret and no key: it opens nothing sealed and calls no rail', () => {
    const actions = statements().flatMap((statement) => [statement.Action].flat());

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
    const custom = settlementTemplate({ settlementSchedule: 'rate(6 hours)', settlementCutoff: 'now' });

    // Assert
    custom.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(6 hours)' });
    expect(custom.findResources('AWS::Lambda::Function')[functionId(custom)]?.Properties.Environment.Variables.SETTLEMENT_CUTOFF).toBe('now');
  }, 120_000);
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
