/**
 * The sparse reconciliation index (gsi4, keys only; `keys.reconciliationIndex`): the transactions the reconciliation
 * watches, one fixed shard at a time, the earliest due first. Queries only, never a Scan.
 */
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ReconciliationState } from '../domain/reconciliation';
import type { DueTransaction } from '../use-cases/reconciliation';
import { writeIfCondition } from './conditions';
import { documentClient, tableName } from './dynamo';
import { keys } from './keys';

/** Up to `limit` of `shard`'s transactions whose next look is due at or before `dueBy`, the earliest first. */
export async function listDue(shard: number, dueBy: string, limit: number): Promise<DueTransaction[]> {
  const { Items = [] } = await documentClient.send(
    new QueryCommand({
      TableName: tableName,
      IndexName: 'gsi4',
      KeyConditionExpression: 'gsi4pk = :shard AND gsi4sk <= :due',
      ExpressionAttributeValues: { ':shard': keys.reconciliationPartition(shard), ':due': `${dueBy}#\uffff` },
      ScanIndexForward: true,
      Limit: limit,
    }),
  );
  return Items.map((item) => {
    const position = item.gsi4sk as string;
    return { svcTxId: (item.pk as string).slice('TX#'.length), position, dueAt: keys.reconciliationDueAt(position) };
  });
}

/**
 * Changes its index entry by `update`, only if the transaction is as the reconciliation read it: still at its listed
 * place, at the revision read (no processor-driven change since; an item written before revisions were kept has none:
 * revision 0). `false` when it changed.
 */
function updateIfAsListed(due: DueTransaction, revision: number, update: string, values: Record<string, unknown> = {}): Promise<boolean> {
  return writeIfCondition(
    documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.transaction(due.svcTxId),
        UpdateExpression: update,
        ConditionExpression: `gsi4sk = :listed AND ${revision === 0 ? '(attribute_not_exists(revision) OR revision = :revision)' : 'revision = :revision'}`,
        ExpressionAttributeValues: { ...values, ':listed': due.position, ':revision': revision },
      }),
    ),
  );
}

/** Moves its next look to `dueAt`, with the watch's new state, unless it changed since it was read: `false` then. */
export function reschedule(due: DueTransaction, revision: number, next: { dueAt: string; state: ReconciliationState }): Promise<boolean> {
  const { gsi4sk } = keys.reconciliationIndex(due.svcTxId, next.dueAt);
  return updateIfAsListed(due, revision, 'SET gsi4sk = :next, reconciliation = :state', { ':next': gsi4sk, ':state': next.state });
}

/** Ends its watch (out of the index), unless it changed since it was read: `false` then. */
export function stopWatching(due: DueTransaction, revision: number): Promise<boolean> {
  return updateIfAsListed(due, revision, 'REMOVE gsi4pk, gsi4sk, reconciliation');
}
