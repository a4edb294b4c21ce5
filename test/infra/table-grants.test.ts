/**
 * Each function's table actions in AWS are exactly what `infra/table-grants.ts` declares for it: the same list
 * the local runtime holds every invocation to (`infra/local/table-grants.ts`), so what the tests exercise
 * locally is what IAM allows in production, no more (no Scan, no BatchWriteItem, no stream read but the relay's).
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { addServiceStacks } from '../../infra/aws/service-stacks';
import { fallbackRoute, routes } from '../../infra/routes';
import { BACKGROUND_TABLE_ACTIONS, tableActionsOf } from '../../infra/table-grants';

type Statement = { Action: string | string[]; Resource: unknown };

let templates: Template[];

beforeAll(() => {
  // The grants do not depend on the code: no bundling (the other infra tests build every bundle).
  const app = new App({ context: { stage: 'dev', 'aws:cdk:bundling-stacks': [] } });
  const stacks = addServiceStacks(app);
  templates = [stacks.api, stacks.delivery, stacks.settlement].map((stack) => Template.fromStack(stack));
}, 120_000);

/** The `dynamodb:` actions of function `name`'s role policy, sorted, without the prefix (`stream` actions kept). */
function tableActionsGranted(name: string): string[] {
  const prefix = `Fn${name.replace(/-/g, '')}ServiceRoleDefaultPolicy`;
  const statements = templates.flatMap((template) =>
    Object.entries(template.findResources('AWS::IAM::Policy'))
      .filter(([logicalId]) => logicalId.startsWith(prefix))
      .flatMap(([, policy]) => policy.Properties.PolicyDocument.Statement as Statement[]),
  );
  const actions = statements.flatMap((statement) => [statement.Action].flat()).filter((action) => action.startsWith('dynamodb:'));
  return [...new Set(actions.map((action) => action.slice('dynamodb:'.length)))].sort();
}

const streamActions = ['DescribeStream', 'GetRecords', 'GetShardIterator', 'ListStreams'];

describe('table grants in AWS', () => {
  const functionNames = [...new Set([...routes.map((route) => route.name), fallbackRoute.name])];

  it.each(functionNames)('grants %s exactly its declared table actions', (name) => {
    expect(tableActionsGranted(name)).toEqual([...(tableActionsOf(name) ?? ['(undeclared)'])].sort());
  });

  it.each(Object.keys(BACKGROUND_TABLE_ACTIONS).filter((name) => name !== 'outbox-relay'))('grants the background function %s exactly its declared table actions', (name) => {
    expect(tableActionsGranted(name)).toEqual([...(tableActionsOf(name) ?? ['(undeclared)'])].sort());
  });

  it('gives the outbox relay the table’s stream and no action on items', () => {
    expect(tableActionsOf('outbox-relay')).toEqual([]);
    expect(tableActionsGranted('outbox-relay')).toEqual(streamActions);
  });

  it('grants no function Scan, BatchWriteItem or a stream read, but the relay its stream', () => {
    const names = [...functionNames, ...Object.keys(BACKGROUND_TABLE_ACTIONS)];
    expect(names.length).toBeGreaterThan(30);
    for (const name of names.filter((candidate) => candidate !== 'outbox-relay')) {
      expect({ name, refused: tableActionsGranted(name).filter((action) => ['Scan', 'BatchWriteItem', ...streamActions].includes(action)) }).toEqual({ name, refused: [] });
    }
  });
});
