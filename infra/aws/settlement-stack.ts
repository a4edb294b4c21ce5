/**
 * The settlement schedule (decisions.md §1, §7): `functions/settlement-scheduled.ts`, the same run as
 * `POST /settlements/run` for every partner, invoked by an EventBridge rule on the deploy-time schedule
 * (`settlementSchedule`, daily at 01:00 UTC by default; `infra/aws/deploy-settings.ts`), and an alarm on its errors,
 * notifying the alarm topic.
 *
 * Its continuation (`functions/settlement-continuation.ts`, settings in `infra/shared/settlement-continuation.ts`): a
 * run that cannot finish in its function's time (this one, or `POST /settlements/run` and its admin twin in the API
 * stack) sends what is left to the stateful stack's continuation queue; this function consumes it, one message at a
 * time and at most two at once, and may send the next. Alarms on its errors and on the queue's dead letters.
 *
 * Both read the partners (gsi1), query the sparse settlement index (gsi3), reserve each batch's lines by
 * conditional updates, put its contents beside it (BatchWriteItem) and commit it in one TransactWriteItems: the
 * table's `settle` access and nothing more, no Scan or DeleteItem; and both may send to the continuation queue. They
 * pay nothing, so they get no rail secret and no rail URL.
 */
import { Duration, Stack, type StackProps } from 'aws-cdk-lib';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Rule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { SettlementSettings } from './deploy-settings';
import { SETTLEMENT_RUN_TIMEOUT_SECONDS } from '../../lib/routes';
import { SETTLEMENT_CONTINUATIONS } from '../shared/settlement-continuation';
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
  /** Where a run that runs out of time sends what is left (the scheduled run and the continuation send; the continuation consumes). */
  settlementQueue: IQueue;
  /** The continuation queue's dead-letter queue: alarmed on. */
  settlementDeadLetters: IQueue;
  /** Where the alarms send their notifications. */
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
    const { table, secretsKey, settlement, settlementQueue, settlementDeadLetters, alarmTopic } = props;
    const environment = {
      TABLE_NAME: table.tableName,
      KMS_KEY_ID: secretsKey.keyArn,
      // The continuation takes its cutoff from its message; it gets the setting too, so both read the same configuration.
      SETTLEMENT_CUTOFF: settlement.cutoff,
      SETTLEMENT_QUEUE_URL: settlementQueue.queueUrl,
    };

    const run = serviceFunction(this, 'settlement-scheduled', {
      timeoutSeconds: SETTLEMENT_RUN_TIMEOUT_SECONDS,
      // One run at a time: a run still going when the next is due makes the next wait (throttled, in Lambda's
      // asynchronous queue, up to MAX_EVENT_AGE). Correctness does not need it: every batch write is a conditional
      // transaction, so overlapping runs (or a run beside POST /settlements/run) never settle a transaction twice;
      // it only spares the table two runs racing for the same items.
      reservedConcurrentExecutions: 1,
      environment,
    });
    grantTableAccess(table, run, BACKGROUND_TABLE_ACTIONS['settlement-scheduled']);
    settlementQueue.grantSendMessages(run);
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

    // One continuation per invocation (each is a whole run), at most two at once: group leases keep them apart. A
    // continuation that throws leaves its message to be received again after the visibility timeout; with one
    // message per batch there is no partial batch to report.
    const continuation = serviceFunction(this, 'settlement-continuation', {
      timeoutSeconds: SETTLEMENT_CONTINUATIONS.consumerTimeoutSeconds,
      environment,
    });
    continuation.addEventSource(
      new SqsEventSource(settlementQueue, {
        batchSize: SETTLEMENT_CONTINUATIONS.batchSize,
        maxConcurrency: SETTLEMENT_CONTINUATIONS.maxConcurrency,
        reportBatchItemFailures: false,
      }),
    );
    grantTableAccess(table, continuation, BACKGROUND_TABLE_ACTIONS['settlement-continuation']);
    // The next continuation, when this one again cannot finish.
    settlementQueue.grantSendMessages(continuation);
    acknowledgeFunctionFindings(continuation, table);

    pagingAlarm(this, 'ContinuationErrorsAlarm', {
      description: `A settlement continuation failed (its message is received again, up to ${SETTLEMENT_CONTINUATIONS.maxReceiveCount} times in all; see the settlement-continuation logs)`,
      metric: continuation.metricErrors({ period: Duration.minutes(5), statistic: 'Sum' }),
      topic: alarmTopic,
    });
    pagingAlarm(this, 'ContinuationDeadLettersAlarm', {
      description:
        'A settlement continuation failed every receive and was dead-lettered: the next scheduled run settles what it left (see the settlement-continuation logs)',
      metric: settlementDeadLetters.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' }),
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
