/**
 * The DynamoDB actions the service's functions may be granted, and the access profiles a route declares: pure data
 * that the route table (`routes.ts`) and the grants (`table-grants.ts`) both read.
 */
/** The DynamoDB actions a function may be granted on the table (IAM names without the `dynamodb:` prefix). */
export type TableAction = 'DescribeTable' | 'GetItem' | 'BatchGetItem' | 'Query' | 'PutItem' | 'UpdateItem' | 'DeleteItem' | 'ConditionCheckItem' | 'BatchWriteItem';

const READ = ['GetItem', 'BatchGetItem', 'Query'] as const satisfies readonly TableAction[];
const ITEMS = [...READ, 'PutItem', 'UpdateItem', 'ConditionCheckItem'] as const satisfies readonly TableAction[];

/**
 * The access profiles a route declares (`RouteAccess.table`). None includes Scan, the stream's actions or (but
 * `describe`) DescribeTable, and only `settle` BatchWriteItem: no other function of the service calls them.
 */
export const TABLE_ACCESS = {
  /** The health check: the table's description, no item. */
  describe: ['DescribeTable'],
  /** Read items: one at a time, in a batch, or by a query (of the table or an index). */
  read: READ,
  /** Read items and write them (alone or in transactions), but never delete one. */
  items: ITEMS,
  /** A settlement run: read and write items, and put a batch's contents beside it many at a time (never a delete). */
  settle: [...ITEMS, 'BatchWriteItem'],
  /** ... and delete them (an API key revoked, a webhook endpoint removed). */
  readWrite: [...ITEMS, 'DeleteItem'],
} as const satisfies Record<string, readonly TableAction[]>;

export type TableAccess = keyof typeof TABLE_ACCESS;
