/**
 * Partner webhook delivery (README: Architecture), settings in `infra/shared/webhook-delivery.ts`:
 * - the outbox relay: a function on the table's stream, filtered to new pending deliveries, that enqueues them
 *   (partial batch failures; a failing batch is split and retried, then skipped: the sweep relays it);
 * - the outbox sweep: a function an EventBridge rule runs every minute, enqueuing what the relay missed;
 * - the consumer: a function on the delivery queue (batches of 10, partial batch failures, bounded
 *   concurrency) that makes one attempt per message and schedules the next by sending a delayed message;
 * - an alarm on the dead-letter queue, notifying the alarm topic.
 * Each function gets only what it touches: the relay the stream and queue send; the sweep a Query on the outbox
 * indexes, UpdateItem (its lease), BatchGetItem (deliveries, when the queue is empty) and queue send; the consumer GetItem, PutItem and UpdateItem on the table,
 * KMS Decrypt (endpoint secrets), queue send (its retries) and consume.
 */
import { Duration, Stack, type StackProps } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { FilterCriteria, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { BACKGROUND_TABLE_ACTIONS, queryIndexesOf } from '../shared/table-grants';
import { DELIVERY_QUEUE, OUTBOX_RELAY, OUTBOX_SWEEP } from '../shared/webhook-delivery';
import { acknowledgeFunctionFindings } from './nag-findings';
import { serviceFunction } from './service-function';
import { grantTableAccess } from './table-access';

export interface DeliveryStackProps extends StackProps {
  table: ITableV2;
  secretsKey: IKey;
  deliveryQueue: IQueue;
  deliveryDeadLetters: IQueue;
  /** Where the dead-letter alarm sends its notifications. */
  alarmTopic: ITopic;
}

export class DeliveryStack extends Stack {
  constructor(scope: Construct, id: string, props: DeliveryStackProps) {
    super(scope, id, props);
    const { table, secretsKey, deliveryQueue, deliveryDeadLetters, alarmTopic } = props;
    const environment = {
      TABLE_NAME: table.tableName,
      // Required of every function in AWS (lib/config.ts); only the consumer may use the key.
      KMS_KEY_ID: secretsKey.keyArn,
      WEBHOOK_QUEUE_URL: deliveryQueue.queueUrl,
    };

    const relay = serviceFunction(this, 'outbox-relay', { environment, timeoutSeconds: OUTBOX_RELAY.consumerTimeoutSeconds });
    relay.addEventSource(
      new DynamoEventSource(table, {
        // From the oldest record kept: a relay deployed after deliveries were written still relays them.
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: OUTBOX_RELAY.batchSize,
        filters: [FilterCriteria.filter(OUTBOX_RELAY.filterPattern)],
        reportBatchItemFailures: true,
        bisectBatchOnError: true,
        retryAttempts: OUTBOX_RELAY.retryAttempts,
        maxRecordAge: Duration.seconds(OUTBOX_RELAY.maxRecordAgeSeconds),
      }),
    );
    deliveryQueue.grantSendMessages(relay);

    const sweep = serviceFunction(this, 'outbox-sweep', { environment, timeoutSeconds: OUTBOX_SWEEP.timeoutSeconds });
    grantTableAccess(table, sweep, BACKGROUND_TABLE_ACTIONS['outbox-sweep'], { queryIndexes: queryIndexesOf('outbox-sweep') });
    deliveryQueue.grantSendMessages(sweep);
    new Rule(this, 'OutboxSweepSchedule', {
      description: 'Enqueues pending partner webhook deliveries the stream relay missed (partner payments service)',
      schedule: Schedule.rate(Duration.minutes(OUTBOX_SWEEP.rateMinutes)),
      targets: [new LambdaFunction(sweep, { retryAttempts: 2 })],
    });

    const consumer = serviceFunction(this, 'webhook-delivery', { environment, timeoutSeconds: DELIVERY_QUEUE.consumerTimeoutSeconds });
    consumer.addEventSource(
      new SqsEventSource(deliveryQueue, {
        batchSize: DELIVERY_QUEUE.batchSize,
        reportBatchItemFailures: true,
        maxConcurrency: DELIVERY_QUEUE.maxConcurrency,
      }),
    );
    grantTableAccess(table, consumer, BACKGROUND_TABLE_ACTIONS['webhook-delivery'], { queryIndexes: queryIndexesOf('webhook-delivery') });
    secretsKey.grantDecrypt(consumer);
    deliveryQueue.grantSendMessages(consumer);

    // The sweep queries the outbox indexes (gsi7, and gsi2 for the legacy partition) by name, so only the relay’s and consumer’s common findings are left.
    for (const fn of [relay, sweep, consumer]) acknowledgeFunctionFindings(fn);

    const deadLetters = new Alarm(this, 'DeadLettersAlarm', {
      alarmDescription: 'A partner webhook delivery message could not be processed at all and was dead-lettered (see the consumer logs)',
      metric: deliveryDeadLetters.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    deadLetters.addAlarmAction(new SnsAction(alarmTopic));
  }
}
