/**
 * The reconciliation with the processor (decisions.md §12): `functions/reconciliation-scheduled.ts`, invoked by an
 * EventBridge rule every 15 minutes, with an alarm on its errors, one on any outcome it applied (each is a processor
 * event the service missed: the webhook endpoint, its secret or the processor's delivery needs a look), and one on its
 * backlog (a look due for over an hour).
 *
 * Least privilege: Query on the reconciliation index (gsi4) and on the table (a partner's webhook endpoints), the item
 * actions of the processor webhook's write on the table alone (no Scan, DeleteItem or BatchWriteItem), and the
 * processor keys' secret (it reads intents, and cancels those it gives up on). It opens nothing sealed and calls no rail.
 */
import { Duration, Stack, type StackProps } from 'aws-cdk-lib';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { RECONCILIATION } from '../shared/reconciliation';
import { BACKGROUND_TABLE_ACTIONS, queryIndexesOf } from '../shared/table-grants';
import { pagingAlarm, serviceMetric } from './alarms';
import { acknowledgeFunctionFindings } from './nag-findings';
import { serviceFunction } from './service-function';
import { grantTableAccess } from './table-access';

export interface ReconciliationStackProps extends StackProps {
  table: ITableV2;
  /** Only its id: required of every function in AWS (lib/config.ts); the run opens nothing sealed. */
  secretsKey: IKey;
  /** The processor keys: the run reads intents with the secret key. */
  processorSecret: ISecret;
  /** Where the alarms send their notifications. */
  alarmTopic: ITopic;
}

/** A failed run is not retried: the next one, 15 minutes on, finds everything it left still due. */
const RETRY_ATTEMPTS = 0;

export class ReconciliationStack extends Stack {
  constructor(scope: Construct, id: string, props: ReconciliationStackProps) {
    super(scope, id, props);
    const { table, secretsKey, processorSecret, alarmTopic } = props;

    const run = serviceFunction(this, 'reconciliation-scheduled', {
      timeoutSeconds: RECONCILIATION.timeoutSeconds,
      // One run at a time. Correctness does not need it (every outcome is applied by a conditional write, once); it
      // only spares the processor two runs asking about the same intents.
      reservedConcurrentExecutions: 1,
      environment: { TABLE_NAME: table.tableName, KMS_KEY_ID: secretsKey.keyArn, PROCESSOR_SECRET_ARN: processorSecret.secretArn },
    });
    grantTableAccess(table, run, BACKGROUND_TABLE_ACTIONS['reconciliation-scheduled'], { queryIndexes: queryIndexesOf('reconciliation-scheduled') });
    processorSecret.grantRead(run);
    acknowledgeFunctionFindings(run);
    run.configureAsyncInvoke({ retryAttempts: RETRY_ATTEMPTS, maxEventAge: Duration.minutes(RECONCILIATION.rateMinutes) });

    new Rule(this, 'ReconciliationSchedule', {
      description: 'Asks the processor about transactions whose events are late, and applies what it says (partner payments service)',
      schedule: Schedule.rate(Duration.minutes(RECONCILIATION.rateMinutes)),
      targets: [new LambdaFunction(run, { retryAttempts: RETRY_ATTEMPTS, maxEventAge: Duration.minutes(RECONCILIATION.rateMinutes) })],
    });

    pagingAlarm(this, 'ReconciliationErrorsAlarm', {
      description: 'A reconciliation run failed (the next one tries again; see the reconciliation-scheduled logs)',
      metric: run.metricErrors({ period: Duration.minutes(RECONCILIATION.rateMinutes), statistic: 'Sum' }),
      topic: alarmTopic,
    });
    // Every outcome the reconciliation applies is a processor event the service did not receive in time: any is one too many.
    pagingAlarm(this, 'ReconciliationFixedAlarm', {
      description:
        'The reconciliation applied a payment outcome the processor event had not: processor events are being lost (check the processor webhook endpoint, its secret, and its failures at the processor)',
      metric: serviceMetric('ReconciliationFixed', 'Sum', Duration.minutes(RECONCILIATION.rateMinutes)),
      topic: alarmTopic,
    });
    // Runs every 15 minutes check what is due: a look due for an hour means runs are not keeping up with the index.
    pagingAlarm(this, 'ReconciliationBacklogAlarm', {
      description:
        'The reconciliation is falling behind: a transaction has been due for a look at the processor for over an hour (see ReconciliationBacklog, and the runs\' logs for their bound, time or failures)',
      metric: serviceMetric('ReconciliationOldestDueAgeSeconds', 'Maximum', Duration.minutes(RECONCILIATION.rateMinutes)),
      threshold: RECONCILIATION.oldestDueAlarmSeconds,
      topic: alarmTopic,
    });
  }
}
