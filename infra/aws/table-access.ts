/**
 * The one mapping from a function's table actions (`table-grants.ts`) to IAM, shared by the API stack (HTTP
 * functions), the delivery stack and the settlement stack (the scheduled run), so a profile means the same everywhere.
 */
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import { TABLE_ACCESS, type TableAccess, type TableAction } from '../table-grants';

/**
 * Grants `grantee` exactly `access` (a profile, or the action list of a background function) on the table and
 * its indexes, and nothing else: no Scan, no BatchWriteItem, no stream read unless listed.
 */
export function grantTableAccess(table: ITableV2, grantee: IGrantable, access: TableAccess | readonly TableAction[]): void {
  const actions = typeof access === 'string' ? TABLE_ACCESS[access] : access;
  if (actions.length > 0) table.grant(grantee, ...actions.map((action) => `dynamodb:${action}`));
}
