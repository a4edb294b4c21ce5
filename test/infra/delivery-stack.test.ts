/**
 * Partner webhook delivery in AWS: the table's stream, the queue and its dead-letter queue (stateful stack), and
 * the relay, sweep and consumer functions with their event sources, schedule and least-privilege grants.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { DeliveryStack } from '../../infra/aws/delivery-stack';
import { StatefulStack } from '../../infra/aws/stateful-stack';
import { DELIVERY_QUEUE, OUTBOX_RELAY } from '../../infra/shared/webhook-delivery';

let stateful: Template;
let delivery: Template;

beforeAll(() => {
  const app = new App();
  const statefulStack = new StatefulStack(app, 'Stateful');
  const deliveryStack = new DeliveryStack(app, 'Delivery', {
    table: statefulStack.table,
    secretsKey: statefulStack.secretsKey,
    deliveryQueue: statefulStack.deliveryQueue,
    deliveryDeadLetters: statefulStack.deliveryDeadLetters,
    alarmTopic: statefulStack.alarmTopic,
  });
  stateful = Template.fromStack(statefulStack);
  delivery = Template.fromStack(deliveryStack);
}, 120_000);

type Statement = { Effect: string; Action: string | string[]; Resource: unknown };

/** The logical id of the function built from `functions/<name>.ts`. */
function functionId(name: string): string {
  const ids = Object.keys(delivery.findResources('AWS::Lambda::Function')).filter((id) => new RegExp(`^Fn${name.replace(/-/g, '')}[A-F0-9]{8}$`).test(id));
  expect(ids).toHaveLength(1);
  return ids[0] ?? '';
}

/** The statements of that function's role policy. */
function statementsOf(name: string): Statement[] {
  const prefix = `Fn${name.replace(/-/g, '')}ServiceRoleDefaultPolicy`;
  return Object.entries(delivery.findResources('AWS::IAM::Policy'))
    .filter(([logicalId]) => logicalId.startsWith(prefix))
    .flatMap(([, policy]) => policy.Properties.PolicyDocument.Statement as Statement[]);
}

const actionsOf = (name: string) => statementsOf(name).flatMap((statement) => [statement.Action].flat());
const serviceActions = (name: string, service: string) => actionsOf(name).filter((action) => action.startsWith(`${service}:`)).sort();

describe('stateful stack: stream and queues', () => {
  it('streams the table’s new images (the outbox relay reads them)', () => {
    stateful.hasResourceProperties('AWS::DynamoDB::GlobalTable', { StreamSpecification: { StreamViewType: 'NEW_IMAGE' } });
  });

  it('redrives the delivery queue to an encrypted dead-letter queue after maxReceiveCount receives', () => {
    const queues = stateful.findResources('AWS::SQS::Queue');
    const [dlqId] = Object.entries(queues).find(([id]) => id.startsWith('WebhookDeliveryDeadLetters')) ?? [];

    expect(DELIVERY_QUEUE.maxReceiveCount).toBe(5);
    stateful.hasResourceProperties('AWS::SQS::Queue', {
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [dlqId, 'Arn'] }, maxReceiveCount: 5 },
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: 4 * 24 * 3600,
    });
    stateful.hasResource('AWS::SQS::Queue', {
      Properties: { SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 24 * 3600 },
      DeletionPolicy: 'Retain',
    });
    // Only TLS to either queue (and to the settlement continuation queues beside them: one policy per queue)
    const [queueId] = Object.keys(queues).filter((id) => id.startsWith('WebhookDeliveryQueue'));
    for (const id of [queueId, dlqId]) {
      stateful.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: id }],
        PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
      });
    }
    stateful.resourcePropertiesCountIs(
      'AWS::SQS::QueuePolicy',
      { PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) } },
      Object.keys(queues).length,
    );
  });

  it('keeps a received message invisible for at least 6 × the consumer’s timeout', () => {
    const queue = Object.entries(stateful.findResources('AWS::SQS::Queue')).find(([id]) => id.startsWith('WebhookDeliveryQueue'))?.[1];
    const consumer = delivery.findResources('AWS::Lambda::Function')[functionId('webhook-delivery')];

    expect(queue?.Properties.VisibilityTimeout).toBeGreaterThanOrEqual(6 * (consumer?.Properties.Timeout as number));
  });
});

describe('delivery stack', () => {
  it('feeds the consumer from the queue in batches of 10, reporting batch item failures, with bounded concurrency', () => {
    delivery.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: functionId('webhook-delivery') },
      EventSourceArn: Match.anyValue(),
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: DELIVERY_QUEUE.maxConcurrency },
    });
  });

  it('feeds the relay from the table’s stream, filtered to new pending deliveries, splitting and retrying failed batches', () => {
    delivery.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: functionId('outbox-relay') },
      StartingPosition: 'TRIM_HORIZON',
      FilterCriteria: { Filters: [{ Pattern: JSON.stringify(OUTBOX_RELAY.filterPattern) }] },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: OUTBOX_RELAY.retryAttempts,
    });
    expect(JSON.parse(JSON.stringify(OUTBOX_RELAY.filterPattern))).toEqual({
      eventName: ['INSERT'],
      dynamodb: { NewImage: { entity: { S: ['webhookDelivery'] }, status: { S: ['pending'] }, attempts: { N: ['0'] } } },
    });
  });

  it('runs the sweep every minute', () => {
    delivery.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 minute)',
      State: 'ENABLED',
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [functionId('outbox-sweep'), 'Arn'] } })],
    });
  });

  it('alarms on any dead-lettered message, notifying the alarm topic', () => {
    const [dlqId] = Object.keys(stateful.findResources('AWS::SQS::Queue')).filter((id) => id.startsWith('WebhookDeliveryDeadLetters'));

    delivery.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Namespace: 'AWS/SQS',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::ImportValue': Match.stringLikeRegexp(dlqId ?? 'missing') } }],
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      AlarmActions: [{ 'Fn::ImportValue': Match.stringLikeRegexp('AlarmTopic') }],
    });
  });

  it('grants no wildcard action anywhere', () => {
    const statements = Object.values(delivery.findResources('AWS::IAM::Policy')).flatMap(
      (policy) => policy.Properties.PolicyDocument.Statement as Statement[],
    );

    expect(statements.length).toBeGreaterThan(0);
    for (const action of statements.flatMap((statement) => [statement.Action].flat())) expect(action).not.toMatch(/(^|:)\*$/);
  });

  it('lets the relay read the stream and send to the queue, and touch no item and no key', () => {
    expect(serviceActions('outbox-relay', 'dynamodb')).toEqual(['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:ListStreams']);
    expect(serviceActions('outbox-relay', 'sqs')).toContain('sqs:SendMessage');
    expect(serviceActions('outbox-relay', 'sqs')).not.toContain('sqs:ReceiveMessage');
    expect(serviceActions('outbox-relay', 'kms')).toEqual([]);
  });

  it('lets the sweep query the outbox indexes (the shards, and the legacy partition) and read and update (lease) items, and send to the queue', () => {
    const dynamo = statementsOf('outbox-sweep').filter((statement) => [statement.Action].flat().some((action) => action.startsWith('dynamodb:')));

    expect(serviceActions('outbox-sweep', 'dynamodb')).toEqual(['dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:UpdateItem']);
    const queried = JSON.stringify(dynamo.find((statement) => statement.Action === 'dynamodb:Query')?.Resource);
    expect(queried).toContain('/index/gsi7');
    expect(queried).toContain('/index/gsi2');
    expect(queried).not.toContain('/index/gsi1');
    expect(serviceActions('outbox-sweep', 'sqs')).toContain('sqs:SendMessage');
    expect(serviceActions('outbox-sweep', 'kms')).toEqual([]);
  });

  it('lets the consumer read and write items and query the parked index (no scan, no delete, no stream), open endpoint secrets (decrypt only), send its retries and consume the queue', () => {
    expect(serviceActions('webhook-delivery', 'dynamodb')).toEqual(['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem']);
    expect(serviceActions('webhook-delivery', 'kms')).toEqual(['kms:Decrypt']);
    expect(serviceActions('webhook-delivery', 'sqs')).toEqual(expect.arrayContaining(['sqs:SendMessage', 'sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:ChangeMessageVisibility']));
  });

  it('gives every function the queue URL and the aws runtime', () => {
    for (const name of ['outbox-relay', 'outbox-sweep', 'webhook-delivery']) {
      const fn = delivery.findResources('AWS::Lambda::Function')[functionId(name)];
      expect(fn?.Properties.Environment.Variables).toMatchObject({ SVC_RUNTIME: 'aws', SERVICE_NAME: 'partner-payments', TABLE_NAME: expect.anything(), KMS_KEY_ID: expect.anything(), WEBHOOK_QUEUE_URL: expect.anything() });
      expect(fn?.Properties.TracingConfig).toEqual({ Mode: 'Active' });
    }
  });
});
