/**
 * Each function's table actions in AWS are exactly what `infra/shared/table-grants.ts` declares for it: the same list
 * the local runtime holds every invocation to (`infra/local/lambda/table-grants.ts`), so what the tests exercise
 * locally is what IAM allows in production, no more (no Scan, no BatchWriteItem but the settlement runs', no stream
 * read but the relay's).
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { addServiceStacks } from '../../infra/aws/service-stacks';
import { consoleDistFixture } from '../support/console-dist';
import { fallbackRoute, routes } from '../../lib/routes';
import { BACKGROUND_TABLE_ACTIONS, QUERY_INDEXES, TABLE_QUERY, tableActionsOf } from '../../infra/shared/table-grants';

type Statement = { Action: string | string[]; Resource: unknown };

let templates: Template[];

beforeAll(() => {
  // The grants do not depend on the code: no bundling (the other infra tests build every bundle).
  const app = new App({ context: { stage: 'dev', 'aws:cdk:bundling-stacks': [] } });
  const stacks = addServiceStacks(app, { consoleDist: consoleDistFixture() });
  templates = [stacks.api, stacks.delivery, stacks.settlement, stacks.reconciliation].map((stack) => Template.fromStack(stack));
}, 120_000);

/** The statements of function `name`'s role policy that grant `dynamodb:` actions. */
function tableStatementsOf(name: string): Statement[] {
  const prefix = `Fn${name.replace(/-/g, '')}ServiceRoleDefaultPolicy`;
  return templates
    .flatMap((template) =>
      Object.entries(template.findResources('AWS::IAM::Policy'))
        .filter(([logicalId]) => logicalId.startsWith(prefix))
        .flatMap(([, policy]) => policy.Properties.PolicyDocument.Statement as Statement[]),
    )
    .filter((statement) => [statement.Action].flat().some((action) => action.startsWith('dynamodb:')));
}

/** The `dynamodb:` actions of function `name`'s role policy, sorted, without the prefix (`stream` actions kept). */
function tableActionsGranted(name: string): string[] {
  const actions = tableStatementsOf(name).flatMap((statement) => [statement.Action].flat());
  return [...new Set(actions.map((action) => action.slice('dynamodb:'.length)))].sort();
}

/** What a statement's resources name: `table`, `index/<name>`, `index/*` (the table's ARN as CloudFormation writes it). */
function resourcesOf(statement: Statement): string[] {
  return [statement.Resource].flat().map((resource) => {
    const text = JSON.stringify(resource);
    const index = /\/index\/([^"]+)"/.exec(text)?.[1];
    return index === undefined ? 'table' : `index/${index}`;
  });
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

  it.each(Object.entries(QUERY_INDEXES))('lets %s query only its declared indexes, and touch items on the table alone', (name, indexes) => {
    const statements = tableStatementsOf(name);
    const queries = statements.filter((statement) => [statement.Action].flat().includes('dynamodb:Query'));
    const others = statements.filter((statement) => !queries.includes(statement));

    expect(queries.flatMap(resourcesOf).sort()).toEqual(indexes.map((index) => (index === TABLE_QUERY ? 'table' : `index/${index}`)).sort());
    expect([...new Set(others.flatMap(resourcesOf))]).toEqual(['table']);
    expect(queries.every((statement) => [statement.Action].flat().length === 1)).toBe(true);
  });

  it('gives the outbox relay the table’s stream and no action on items', () => {
    expect(tableActionsOf('outbox-relay')).toEqual([]);
    expect(tableActionsGranted('outbox-relay')).toEqual(streamActions);
  });

  it('grants no function Scan or a stream read, but the relay its stream', () => {
    const names = [...functionNames, ...Object.keys(BACKGROUND_TABLE_ACTIONS)];
    expect(names.length).toBeGreaterThan(30);
    for (const name of names.filter((candidate) => candidate !== 'outbox-relay')) {
      expect({ name, refused: tableActionsGranted(name).filter((action) => ['Scan', ...streamActions].includes(action)) }).toEqual({ name, refused: [] });
    }
  });

  it('grants BatchWriteItem only to the functions that run settlement (a batch’s contents are put beside it in chunks)', () => {
    const names = [...functionNames, ...Object.keys(BACKGROUND_TABLE_ACTIONS)];

    expect(names.filter((name) => tableActionsGranted(name).includes('BatchWriteItem')).sort()).toEqual([
      'admin-settlements-run',
      'settlement-continuation',
      'settlement-scheduled',
      'settlements-run',
    ]);
  });
});
