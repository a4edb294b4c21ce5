/**
 * What each function may do on the table, as IAM action lists, defined once: the CDK stacks grant exactly these
 * (`infra/aws/table-access.ts`), and the local runtime refuses any other call the way IAM would (`infra/local/lambda/table-grants.ts`),
 * so a missing grant fails `npm start` and the tests instead of production. Pure data: no CDK, no I/O.
 */
import { fallbackRoute, routes } from '../../lib/routes';
import { TABLE_ACCESS, type TableAction } from '../../lib/table-access';

export { TABLE_ACCESS, type TableAccess, type TableAction } from '../../lib/table-access';

/**
 * The functions no HTTP route invokes, and their table actions. The outbox relay reads the table's stream only
 * (its event source mapping's grant, not an action on items); the sweep queries only the outbox indexes, leases
 * entries (an update) and, when the queue is known to be empty, reads what the keys-only outbox does not hold.
 */
export const BACKGROUND_TABLE_ACTIONS = {
  'outbox-relay': [],
  'outbox-sweep': ['BatchGetItem', 'Query', 'UpdateItem'],
  /**
   * Reads the delivery and its endpoint, claims and records attempts (an update and an audit put, in one transaction),
   * parks deliveries and queries the parked index to wake them.
   */
  'webhook-delivery': ['GetItem', 'Query', 'PutItem', 'UpdateItem'],
  /** As `POST /settlements/run`: queries the settlement index, reserves lines, writes batches' contents and commits them. */
  'settlement-scheduled': TABLE_ACCESS.settle,
  /** The same run, continued from a queue message (`functions/settlement-continuation.ts`). */
  'settlement-continuation': TABLE_ACCESS.settle,
  /**
   * Lists the reconciliation index, reads each transaction, its payee (a batch) and its partner's endpoints (a Query
   * of the table), sends an open one to the back (an update), and applies an outcome as the processor webhook does:
   * one transaction of puts (the event record, entries, deliveries) and the transaction's update.
   */
  'reconciliation-scheduled': ['GetItem', 'BatchGetItem', 'Query', 'PutItem', 'UpdateItem'],
} as const satisfies Record<string, readonly TableAction[]>;

/** In {@link QUERY_INDEXES}: a Query of the table itself (its own keys), not of an index. */
export const TABLE_QUERY = 'table';

/**
 * Functions whose Query is limited to some indexes (their role names those indexes, and the table itself only when
 * {@link TABLE_QUERY} is listed); every other function's Query covers the table and all its indexes.
 */
export const QUERY_INDEXES: Readonly<Record<string, readonly string[]>> = {
  /** The outbox's sparse, sharded index, and gsi2 for its legacy partition (docs/data-model.md). */
  'outbox-sweep': ['gsi7', 'gsi2'],
  /** The reconciliation index, and the table for a partner's webhook endpoints (under its partner's key). */
  'reconciliation-scheduled': [TABLE_QUERY, 'gsi4'],
  /** The parked-deliveries index only (items it reads and writes by key). */
  'webhook-delivery': ['gsi4'],
};

/** The indexes function `name` may query, or undefined for the table and every index. */
export const queryIndexesOf = (name: string): readonly string[] | undefined => (Object.hasOwn(QUERY_INDEXES, name) ? QUERY_INDEXES[name] : undefined);

/** The table actions granted to function `name` (a route's or a background function's), or undefined for no such function. */
export function tableActionsOf(name: string): readonly TableAction[] | undefined {
  if (Object.hasOwn(BACKGROUND_TABLE_ACTIONS, name)) return BACKGROUND_TABLE_ACTIONS[name as keyof typeof BACKGROUND_TABLE_ACTIONS];
  const route = routes.find((candidate) => candidate.name === name) ?? (name === fallbackRoute.name ? fallbackRoute : undefined);
  if (route === undefined) return undefined;
  return route.access.table === undefined ? [] : TABLE_ACCESS[route.access.table];
}

/** One item of a TransactWriteItems request: IAM checks each item's own action. */
const TRANSACT_WRITE_ACTIONS = { Put: 'PutItem', Update: 'UpdateItem', Delete: 'DeleteItem', ConditionCheck: 'ConditionCheckItem' } as const;

/**
 * The IAM actions one DynamoDB request needs, from its command's name (`GetItemCommand`) and input. A transaction
 * has no action of its own: IAM authorises each of its items (a `Put` needs PutItem, a `ConditionCheck`
 * ConditionCheckItem), and TransactGetItems needs GetItem.
 */
export function actionsOfRequest(commandName: string, input: unknown): string[] {
  const operation = commandName.replace(/Command$/, '');
  const items = (input as { TransactItems?: Array<Record<string, unknown>> } | undefined)?.TransactItems ?? [];
  if (operation === 'TransactGetItems') return ['GetItem'];
  if (operation !== 'TransactWriteItems') return [operation];
  const actions = items.flatMap((item) =>
    Object.entries(TRANSACT_WRITE_ACTIONS)
      .filter(([kind]) => item[kind] !== undefined)
      .map(([, action]) => action),
  );
  return [...new Set(actions)];
}
