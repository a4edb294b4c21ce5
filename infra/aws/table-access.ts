/**
 * The one mapping from a function's declared table access (`RouteAccess.table`, infra/routes.ts) to IAM, shared by
 * the API stack (HTTP functions) and the settlement stack (the scheduled run), so `items` means the same everywhere.
 */
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import type { RouteAccess } from '../routes';

/** Grants `grantee` exactly `access` on the table and its indexes (least privilege). */
export function grantTableAccess(table: ITableV2, grantee: IGrantable, access: NonNullable<RouteAccess['table']>): void {
  switch (access) {
    case 'describe':
      table.grant(grantee, 'dynamodb:DescribeTable');
      return;
    case 'read':
      table.grantReadData(grantee);
      return;
    case 'items':
      // Read items (one at a time, by Query, or in a BatchGetItem: the payee's partner and client, the transactions
      // an adjustment reverses) and write them in transactions; never Scan, DeleteItem or BatchWriteItem.
      table.grant(grantee, 'dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem');
      return;
    case 'readWrite':
      table.grantReadWriteData(grantee);
      return;
  }
}
