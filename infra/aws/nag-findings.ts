/**
 * The cdk-nag (AwsSolutions) findings every service function raises by design, and those of the console stack's
 * distribution and BucketDeployment, acknowledged with their reasons (`Validations.of(...).acknowledge`, which
 * cdk-nag 3 reads; test/infra/cdk-nag.test.ts runs the rules). A stack calls these for what it builds; a finding
 * of its own it acknowledges where it makes it.
 */
import { type CfnResource, DefaultStackSynthesizer, Stack, Validations } from 'aws-cdk-lib';
import type { IDistribution } from 'aws-cdk-lib/aws-cloudfront';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Bucket } from 'aws-cdk-lib/aws-s3';

/**
 * Acknowledges, on `fn` and its role: the managed logging policy, the `*` resource of X-Ray's actions, which take
 * no other (test/infra/cdk-nag.test.ts checks no other action has it), the Node 22 runtime, and, when `grantedTable` is given (a
 * grant made by `grantTableAccess`), the grant's cover of the table's indexes (`<table>/index/*`).
 */
export function acknowledgeFunctionFindings(fn: IFunction, grantedTable?: ITableV2): void {
  const on = Validations.of(fn);
  on.acknowledge({
    id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
    reason: 'Lambda’s own logging policy (create log streams and put events): AWS keeps it to what a function needs to log.',
  });
  on.acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason:
      'Only X-Ray’s xray:PutTraceSegments and xray:PutTelemetryRecords (active tracing), which take no resource but *; the infra tests fail on any other action granted on *.',
  });
  on.acknowledge({
    id: 'AwsSolutions-L1',
    reason: 'Node 22 on purpose: package.json engines, the esbuild target and the tests run Node 22; the runtime moves with them.',
  });
  if (grantedTable !== undefined) {
    const table = grantedTable.node.defaultChild as CfnResource;
    on.acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${Stack.of(table).getLogicalId(table)}.Arn>/index/*]`,
      reason:
        'The single table’s own global secondary indexes (docs/data-model.md), which a table grant covers with the table (the same actions, no more); no other table.',
    });
  }
}

/**
 * The console stack's findings (`console-stack.ts`), acknowledged with their reasons: on the distribution, what
 * this deployment deliberately leaves out (geo restriction, a web ACL, a custom domain's certificate); on the
 * provider function `BucketDeployment` shares in the stack (CDK's own, its role and runtime set by aws-cdk-lib),
 * what it needs to copy the build from the CDK assets bucket into the site bucket. Call it after the deployments
 * are made (the provider exists from the first).
 */
export function acknowledgeConsoleFindings(stack: Stack, resources: { distribution: IDistribution; siteBucket: Bucket }): void {
  const distribution = Validations.of(resources.distribution);
  distribution.acknowledge({
    id: 'AwsSolutions-CFR1',
    reason: 'No geo restriction: partners call the API and admins sign in from any country; access is decided by API keys, HMAC signatures and admin tokens.',
  });
  distribution.acknowledge({
    id: 'AwsSolutions-CFR2',
    reason:
      'No AWS WAF web ACL (one for CloudFront lives in us-east-1, outside this app): the API stage throttles every route, the functions rate-limit each partner, and the admin routes have a JWT authorizer. docs/deploy.md says how to attach one.',
  });
  distribution.acknowledge({
    id: 'AwsSolutions-CFR4',
    reason:
      'The default *.cloudfront.net certificate, for which CloudFront fixes the minimum viewer protocol at TLSv1 whatever the setting; a custom domain with an ACM certificate (TLSv1.2_2021) is not configured here (docs/deploy.md).',
  });

  const provider = stack.node.children.find((child) => child.node.id.startsWith('Custom::CDKBucketDeployment'));
  if (provider === undefined) throw new Error('acknowledgeConsoleFindings: call it after the stack’s BucketDeployment is made');
  const onProvider = Validations.of(provider);
  onProvider.acknowledge({
    id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
    reason: 'BucketDeployment’s provider function (aws-cdk-lib’s): Lambda’s own logging policy, which AWS keeps to creating log streams and putting events.',
  });
  onProvider.acknowledge({
    id: 'AwsSolutions-L1',
    reason: 'BucketDeployment’s provider function: aws-cdk-lib sets its runtime (Python, with the AWS CLI layer) and moves it with each release; no code of ours runs in it.',
  });
  const siteBucket = resources.siteBucket.node.defaultChild as CfnResource;
  const assetsBucket = `arn:<AWS::Partition>:s3:::cdk-${DefaultStackSynthesizer.DEFAULT_QUALIFIER}-assets-<AWS::AccountId>-<AWS::Region>/*`;
  const wildcards: Array<[string, string]> = [
    [`Resource::${assetsBucket}`, 'reads the build’s zip files, whose keys are asset hashes known only at synth, from the CDK bootstrap assets bucket'],
    [`Resource::<${stack.getLogicalId(siteBucket)}.Arn>/*`, 'writes and prunes the console’s files anywhere in the site bucket, which holds nothing else'],
    ['Action::s3:GetObject*', 'reads the build from the assets bucket and compares it with the site bucket’s objects (GetObject and its versions, tags, ACL)'],
    ['Action::s3:GetBucket*', 'reads the location and settings of the two buckets it syncs between'],
    ['Action::s3:List*', 'lists the site bucket’s objects to sync and prune them'],
    ['Action::s3:DeleteObject*', 'prunes files no longer in the build from the site bucket (the hashed assets’ deployment never prunes)'],
    ['Action::s3:Abort*', 'aborts its own multipart uploads into the site bucket when a copy fails'],
  ];
  for (const [finding, why] of wildcards) {
    onProvider.acknowledge({ id: `AwsSolutions-IAM5[${finding}]`, reason: `BucketDeployment’s provider function (aws-cdk-lib’s grant): ${why}.` });
  }
}
