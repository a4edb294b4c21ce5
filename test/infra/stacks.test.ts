import { beforeAll, describe, expect, it } from '@jest/globals';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { ApiStack } from '../../infra/aws/api-stack';
import { StatefulStack } from '../../infra/aws/stateful-stack';
import { fallbackRoute, routeKey, routes } from '../../infra/routes';
import { GLOBAL_INDEXES } from '../../lib/store/table';

let stateful: Template;
let api: Template;

beforeAll(() => {
  const app = new App();
  const statefulStack = new StatefulStack(app, 'Stateful');
  const apiStack = new ApiStack(app, 'Api', { table: statefulStack.table });
  stateful = Template.fromStack(statefulStack);
  api = Template.fromStack(apiStack);
}, 120_000);

describe('stateful stack', () => {
  it('has one table with the single-table keys, every GSI, TTL, PITR and deletion protection', () => {
    stateful.resourceCountIs('AWS::DynamoDB::GlobalTable', 1);
    stateful.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
      GlobalSecondaryIndexes: GLOBAL_INDEXES.map((index) =>
        Match.objectLike({
          IndexName: index.indexName,
          KeySchema: [
            { AttributeName: index.partitionKey, KeyType: 'HASH' },
            { AttributeName: index.sortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        }),
      ),
      Replicas: [
        Match.objectLike({
          PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
          DeletionProtectionEnabled: true,
        }),
      ],
    });
    stateful.hasResource('AWS::DynamoDB::GlobalTable', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
  });
});

describe('API stack', () => {
  it('has one Node 22 function per route plus the $default function', () => {
    const functions = api.findResources('AWS::Lambda::Function', { Properties: { Runtime: 'nodejs22.x' } });
    expect(Object.keys(functions)).toHaveLength(routes.length + 1);
    for (const name of [...routes.map((route) => route.name), fallbackRoute.name]) {
      expect(Object.keys(functions).some((logicalId) => logicalId.startsWith(`Fn${name.replace(/-/g, '')}`))).toBe(true);
    }
  });

  it('routes every entry of the route table, and $default', () => {
    for (const route of routes) api.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: routeKey(route) });
    api.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: '$default' });
    api.resourceCountIs('AWS::ApiGatewayV2::Route', routes.length + 1);
  });

  it('runs every function in the aws runtime against the stateful table', () => {
    const functions = Object.values(api.findResources('AWS::Lambda::Function', { Properties: { Runtime: 'nodejs22.x' } }));
    for (const fn of functions) {
      expect(fn.Properties.Environment.Variables).toMatchObject({ SVC_RUNTIME: 'aws', TABLE_NAME: expect.anything() });
      expect(fn.Properties.TracingConfig).toEqual({ Mode: 'Active' });
    }
  });

  it('grants table access only to routes that declare it (health and $default get none)', () => {
    const policies = Object.values(api.findResources('AWS::IAM::Policy'));
    const tableStatements = policies.flatMap((policy) =>
      (policy.Properties.PolicyDocument.Statement as Array<{ Action: string | string[] }>).filter((statement) =>
        [statement.Action].flat().some((action) => action.startsWith('dynamodb:')),
      ),
    );
    const routesWithTable = routes.filter((route) => route.access.table !== undefined);
    expect(tableStatements).toHaveLength(routesWithTable.length);
  });
});
