/**
 * The cdk-nag (AwsSolutions) findings every service function raises by design, acknowledged with their reasons
 * (`Validations.of(...).acknowledge`, which cdk-nag 3 reads; test/infra/cdk-nag.test.ts runs the rules). A stack
 * calls this for each function it builds; a finding of its own it acknowledges where it makes it.
 */
import { type CfnResource, Stack, Validations } from 'aws-cdk-lib';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';

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
