/**
 * The settlement schedule (decisions.md §1, §7): `functions/settlement-scheduled.ts`, the same run as
 * `POST /settlements/run` for every partner, invoked by an EventBridge rule on the deploy-time schedule
 * (`settlementSchedule`, daily at 01:00 UTC by default; `infra/aws/deploy-settings.ts`), and an alarm on its errors,
 * notifying the alarm topic.
 *
 * The run reads the partners (gsi1), queries the sparse settlement index (gsi3), reserves each batch's lines by
 * conditional updates, puts its contents beside it (BatchWriteItem) and commits it in one TransactWriteItems: the
 * table's `settle` access and nothing more, no Scan or DeleteItem. It pays nothing, so it gets no rail secret and
 * no rail URL.
 */
import { Duration, Stack, type StackProps } from 'aws-cdk-lib';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Rule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import type { SettlementSettings } from './deploy-settings';
import { SETTLEMENT_RUN_TIMEOUT_SECONDS } from '../../lib/routes';
import { BACKGROUND_TABLE_ACTIONS } from '../shared/table-grants';
import { pagingAlarm, serviceMetric } from './alarms';
import { acknowledgeFunctionFindings } from './nag-findings';
import { serviceFunction } from './service-function';
import { grantTableAccess } from './table-access';

export interface SettlementStackProps extends StackProps {
  table: ITableV2;
  /** Only its id: required of every function in AWS (lib/config.ts); the run opens nothing sealed. */
  secretsKey: IKey;
  settlement: SettlementSettings;
  /** Where the error alarm sends its notifications. */
  alarmTopic: ITopic;
}

/**
 * A run that fails (or whose event EventBridge or Lambda could not deliver) is tried again twice, within an hour:
 * a run is idempotent by construction, so a retry only settles what the failed one left. Older than an hour, the
 * event is dropped and the next scheduled run (or `POST /settlements/run`) settles the rest.
 */
const RETRY_ATTEMPTS = 2;
const MAX_EVENT_AGE = Duration.hours(1);

export class SettlementStack extends Stack {
  constructor(scope: Construct, id: string, props: SettlementStackProps) {
    super(scope, id, props);
    const { table, secretsKey, settlement, alarmTopic } = props;

    const run = serviceFunction(this, 'settlement-scheduled', {
      timeoutSeconds: SETTLEMENT_RUN_TIMEOUT_SECONDS,
      // One run at a time: a run still going when the next is due makes the next wait (throttled, in Lambda's
      // asynchronous queue, up to MAX_EVENT_AGE). Correctness does not need it: every batch write is a conditional
      // transaction, so overlapping runs (or a run beside POST /settlements/run) never settle a transaction twice;
      // it only spares the table two runs racing for the same items.
      reservedConcurrentExecutions: 1,
      environment: { TABLE_NAME: table.tableName, KMS_KEY_ID: secretsKey.keyArn, SETTLEMENT_CUTOFF: settlement.cutoff },
    });
    grantTableAccess(table, run, BACKGROUND_TABLE_ACTIONS['settlement-scheduled']);
    acknowledgeFunctionFindings(run, table);
    // Lambda's own retries of a failed (or throttled) asynchronous invocation.
    run.configureAsyncInvoke({ retryAttempts: RETRY_ATTEMPTS, maxEventAge: MAX_EVENT_AGE });

    new Rule(this, 'SettlementSchedule', {
      description: 'Runs the settlement for every partner (partner payments service)',
      schedule: settlement.schedule,
      // EventBridge's retries of a failed delivery to Lambda.
      targets: [new LambdaFunction(run, { retryAttempts: RETRY_ATTEMPTS, maxEventAge: MAX_EVENT_AGE })],
    });

    pagingAlarm(this, 'ScheduledRunErrorsAlarm', {
      description: 'A scheduled settlement run failed (it is retried; see the settlement-scheduled logs)',
      metric: run.metricErrors({ period: Duration.minutes(5), statistic: 'Sum' }),
      topic: alarmTopic,
    });

    // decisions.md §5a: a merchant that owes money (its waiting reversals exceed its waiting sales) for more than 7
    // days is an operator's matter. Each scheduled run counts them (lib/use-cases/settlements.ts, zero included).
    pagingAlarm(this, 'MerchantsOwingAlarm', {
      description:
        'A merchant has owed money for more than 7 days: its refunds, disputes and dispute fees exceed its sales, so it is not paid (GET /admin/partners/{id}/balances?owing=true)',
      metric: serviceMetric('MerchantsOwingOver7Days', 'Maximum', Duration.days(1)),
      topic: alarmTopic,
    });
  }
}
