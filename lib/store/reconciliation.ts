/**
 * The sparse reconciliation index (gsi4, keys only; `keys.reconciliationIndex`): the transactions that wait for the
 * processor's word, one fixed shard at a time, oldest change (or look) first. Queries only, never a Scan.
 */
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DueTransaction } from '../use-cases/reconciliation';
import { writeIfCondition } from './conditions';
import { documentClient, tableName } from './dynamo';
import { keys } from './keys';


/** Up to `limit` of `shard`'s transactions whose last change or look was at or before `dueBefore`, oldest first. */
export async function listDue(shard: number, dueBefore: string, limit: number): Promise<DueTransaction[]> {
  const { Items = [] } = await documentClient.send(
    new QueryCommand({
      TableName: tableName,
      IndexName: 'gsi4',
      KeyConditionExpression: 'gsi4pk = :shard AND gsi4sk <= :due',
      ExpressionAttributeValues: { ':shard': keys.reconciliationPartition(shard), ':due': `${dueBefore}#\uffff` },
      ScanIndexForward: true,
      Limit: limit,
    }),
  );
  return Items.map((item) => ({ svcTxId: (item.pk as string).slice('TX#'.length), position: item.gsi4sk as string }));
}

/**
 * Puts a transaction the reconciliation looked at to the back of its shard (its sort key at `checkedAt`), unless it
 * changed since it was listed (moved on, so its keys are gone, or looked at by another run): `false` then.
 */
export function markChecked(due: DueTransaction, checkedAt: string): Promise<boolean> {
  const { gsi4sk } = keys.reconciliationIndex(due.svcTxId, checkedAt);
  return writeIfCondition(
    documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.transaction(due.svcTxId),
        UpdateExpression: 'SET gsi4sk = :checked',
        ConditionExpression: 'gsi4sk = :listed',
        ExpressionAttributeValues: { ':checked': gsi4sk, ':listed': due.position },
      }),
    ),
  );
}

