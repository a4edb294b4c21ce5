/**
 * The one mapping from a function's table actions (`../shared/table-grants.ts`) to IAM, shared by the API stack (HTTP
 * functions), the delivery stack and the settlement stack (the scheduled run), so a profile means the same everywhere.
 */
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { TABLE_ACCESS, TABLE_QUERY, type TableAccess, type TableAction } from '../shared/table-grants';

/**
 * Grants `grantee` exactly `access` (a profile, or the action list of a background function) on the table and
 * its indexes, and nothing else: no Scan, no BatchWriteItem but for settlement runs, no stream read unless listed. With `queryIndexes`,
 * Query is granted on those indexes only (and on the table when they list `TABLE_QUERY`), and the other actions on
 * the table alone.
 */
export function grantTableAccess(
  table: ITableV2,
  grantee: IGrantable,
  access: TableAccess | readonly TableAction[],
  options: { queryIndexes?: readonly string[] | undefined } = {},
): void {
  const actions = typeof access === 'string' ? TABLE_ACCESS[access] : access;
  const { queryIndexes } = options;
  if (queryIndexes === undefined) {
    if (actions.length > 0) table.grant(grantee, ...actions.map((action) => `dynamodb:${action}`));
    return;
  }
  // Query on the named indexes only; every other action on the table's items (the table's ARN, no index).
  const itemActions = actions.filter((action) => action !== 'Query');
  if (actions.includes('Query')) {
    const resourceArns = queryIndexes.map((index) => (index === TABLE_QUERY ? table.tableArn : `${table.tableArn}/index/${index}`));
    Grant.addToPrincipal({ grantee, actions: ['dynamodb:Query'], resourceArns });
  }
  if (itemActions.length > 0) Grant.addToPrincipal({ grantee, actions: itemActions.map((action) => `dynamodb:${action}`), resourceArns: [table.tableArn] });
}
