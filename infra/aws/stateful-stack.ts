/**
 * Everything that holds data and must outlive a redeploy: the single table (with every GSI of
 * `lib/store/table.ts`, TTL, point-in-time recovery, deletion protection, and its stream of new images, which
 * the outbox relay reads) and the KMS key that envelope-encrypts the secrets stored in it; the Secrets Manager
 * secrets holding the processor keys, the payout rails' keys and the key that seals paging cursors; the partner webhook delivery
 * queue and its dead-letter queue (settings in `infra/shared/webhook-delivery.ts`); the settlement continuation queue
 * and its dead-letter queue (settings in `infra/shared/settlement-continuation.ts`); the SNS topic every alarm notifies.
 *
 * By stage (`infra/aws/deploy-settings.ts`): in `prod` the table (with deletion protection), the key, the secrets and
 * the dead letters are retained when the stack is deleted; in `dev` they go with it.
 */
import { Duration, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { AttributeType, Billing, ProjectionType, StreamViewType, TableV2, type ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { type IKey, Key } from 'aws-cdk-lib/aws-kms';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { type ITopic, Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { type IQueue, Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { Stage } from './deploy-settings';
import { GLOBAL_INDEXES, PARTITION_KEY, SORT_KEY, STREAM_VIEW_TYPE, TTL_ATTRIBUTE } from '../../lib/store/table';
import { SETTLEMENT_CONTINUATIONS } from '../shared/settlement-continuation';
import { DELIVERY_QUEUE } from '../shared/webhook-delivery';

export interface StatefulStackProps extends StackProps {
  /** Unset: `prod` (a stack built without a stage keeps what production keeps; the app itself requires a stage). */
  stage?: Stage;
  /** Subscribed by email to the alarm topic. */
  alarmEmail?: string | undefined;
}

export class StatefulStack extends Stack {
  readonly table: ITableV2;
  readonly secretsKey: IKey;
  readonly processorSecret: ISecret;
  readonly cursorSecret: ISecret;
  readonly railsSecret: ISecret;
  readonly deliveryQueue: IQueue;
  readonly deliveryDeadLetters: IQueue;
  /** Where a settlement run that ran out of time sends what is left (`SETTLEMENT_QUEUE_URL`); the settlement stack consumes it. */
  readonly settlementQueue: IQueue;
  readonly settlementDeadLetters: IQueue;
  /** Every alarm's action (CloudWatch publishes to it). */
  readonly alarmTopic: ITopic;

  constructor(scope: Construct, id: string, props?: StatefulStackProps) {
    super(scope, id, props);
    const prod = (props?.stage ?? 'prod') === 'prod';
    const removalPolicy = prod ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    this.table = new TableV2(this, 'Table', {
      partitionKey: { name: PARTITION_KEY, type: AttributeType.STRING },
      sortKey: { name: SORT_KEY, type: AttributeType.STRING },
      billing: Billing.onDemand(),
      timeToLiveAttribute: TTL_ATTRIBUTE,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: prod,
      removalPolicy,
      dynamoStream: StreamViewType[STREAM_VIEW_TYPE],
      globalSecondaryIndexes: GLOBAL_INDEXES.map((index) => ({
        indexName: index.indexName,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
        ...(typeof index.projection === 'object'
          ? { projectionType: ProjectionType.INCLUDE, nonKeyAttributes: [...index.projection.include] }
          : { projectionType: index.projection === 'KEYS_ONLY' ? ProjectionType.KEYS_ONLY : ProjectionType.ALL }),
      })),
    });
    this.secretsKey = new Key(this, 'SecretsKey', {
      description: 'Envelope encryption of HMAC and webhook secrets (partner payments service)',
      enableKeyRotation: true,
      removalPolicy,
      // The shortest wait KMS allows before a key scheduled for deletion (a dev stack's) is gone.
      ...(prod ? {} : { pendingWindow: Duration.days(7) }),
    });
    // Set the real values after the first deploy (`aws secretsmanager put-secret-value`); until then the
    // service answers PROCESSOR_KEY_MISSING / PROCESSOR_PUBLISHABLE_MISSING.
    this.processorSecret = new Secret(this, 'ProcessorKeys', {
      description: 'Card processor keys: {"secret_key","publishable_key","webhook_secret"} (partner payments service)',
      generateSecretString: {
        secretStringTemplate: JSON.stringify({ secret_key: '', publishable_key: '', webhook_secret: '' }),
        generateStringKey: 'unused',
      },
      removalPolicy,
    });
    // The same: a placeholder the operator fills in after the first deploy, read by lib/payouts/rail-keys.ts; until
    // then (or with an empty key) that rail's payouts answer failed ("rail A is not configured").
    this.railsSecret = new Secret(this, 'RailKeys', {
      description: 'Payout rail API keys: {"rail_a_api_key","rail_b_api_key"} (partner payments service)',
      generateSecretString: {
        secretStringTemplate: JSON.stringify({ rail_a_api_key: '', rail_b_api_key: '' }),
        generateStringKey: 'unused',
      },
      removalPolicy,
    });
    // Generated once (64 alphanumerics, about 380 bits) and kept: replacing it voids every cursor handed out.
    this.cursorSecret = new Secret(this, 'CursorKey', {
      description: 'HMAC key that seals list paging cursors (partner payments service)',
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
      removalPolicy,
    });

    const externalKeys = 'Keys issued by the processor and the rails: rotated there, then put here (docs/deploy.md); no rotation Lambda can issue them.';
    Validations.of(this.processorSecret).acknowledge({ id: 'AwsSolutions-SMG4', reason: externalKeys });
    Validations.of(this.railsSecret).acknowledge({ id: 'AwsSolutions-SMG4', reason: externalKeys });
    Validations.of(this.cursorSecret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason: 'A new cursor key voids every paging cursor handed out, so it is rotated by hand, when wanted (docs/deploy.md), not on a schedule.',
    });

    // Messages are `{ deliveryId }` only, so SQS-managed encryption at rest is enough (no key to grant). A dead
    // letter is evidence of a delivery the consumer could not process at all: kept 14 days, and on stack deletion.
    this.deliveryDeadLetters = new Queue(this, 'WebhookDeliveryDeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(DELIVERY_QUEUE.deadLetterRetentionDays),
      removalPolicy,
    });
    this.deliveryQueue = new Queue(this, 'WebhookDeliveryQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(DELIVERY_QUEUE.visibilityTimeoutSeconds),
      retentionPeriod: Duration.days(DELIVERY_QUEUE.retentionDays),
      deadLetterQueue: { queue: this.deliveryDeadLetters, maxReceiveCount: DELIVERY_QUEUE.maxReceiveCount },
    });

    // The same for settlement continuations: messages are a run's scope and cutoff (ids and an instant, no money),
    // SQS-managed encryption is enough. A dead letter is a continuation that failed every receive; the next scheduled
    // run settles what it left, so it is kept for inspection only, as the delivery's are.
    this.settlementDeadLetters = new Queue(this, 'SettlementContinuationDeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(SETTLEMENT_CONTINUATIONS.deadLetterRetentionDays),
      removalPolicy,
    });
    this.settlementQueue = new Queue(this, 'SettlementContinuationQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(SETTLEMENT_CONTINUATIONS.visibilityTimeoutSeconds),
      retentionPeriod: Duration.days(SETTLEMENT_CONTINUATIONS.retentionDays),
      deadLetterQueue: { queue: this.settlementDeadLetters, maxReceiveCount: SETTLEMENT_CONTINUATIONS.maxReceiveCount },
    });

    // Alarm notifications name an alarm and a metric, nothing of a partner or a payment.
    const alarmTopic = new Topic(this, 'AlarmTopic', { displayName: 'Partner payments alarms', enforceSSL: true });
    Validations.of(alarmTopic).acknowledge({
      id: 'AwsSolutions-SNS2',
      reason:
        'Alarm notifications carry no customer data, and CloudWatch can publish to an encrypted topic only with a customer managed key whose policy admits it: not worth a key.',
    });
    if (props?.alarmEmail !== undefined) alarmTopic.addSubscription(new EmailSubscription(props.alarmEmail));
    this.alarmTopic = alarmTopic;
  }
}
