import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';

/** Whether a write failed only because its condition did not hold (single write or transaction). */
export function isConditionFailure(error: unknown): boolean {
  if (error instanceof ConditionalCheckFailedException) return true;
  return (
    error instanceof TransactionCanceledException &&
    (error.CancellationReasons ?? []).some((reason) => reason.Code === 'ConditionalCheckFailed')
  );
}

/** The index (in the TransactItems list) of each item whose condition failed. */
export function failedConditions(error: unknown): number[] {
  if (!(error instanceof TransactionCanceledException)) return [];
  return (error.CancellationReasons ?? []).flatMap((reason, i) => (reason.Code === 'ConditionalCheckFailed' ? [i] : []));
}

/** Runs a conditional write; `false` when its condition did not hold, any other failure rethrown. */
export async function writeIfCondition(write: Promise<unknown>): Promise<boolean> {
  try {
    await write;
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/**
 * The item as it was when the transaction item at `index` failed its condition (asked for with
 * `ReturnValuesOnConditionCheckFailure: 'ALL_OLD'`), as plain values; `undefined` when there was no such item.
 */
export function cancelledItem(error: unknown, index: number): Record<string, unknown> | undefined {
  if (!(error instanceof TransactionCanceledException)) return undefined;
  const item = error.CancellationReasons?.[index]?.Item;
  return item === undefined ? undefined : unmarshall(item);
}

/**
 * The item that failed a single write's condition (asked for with `ReturnValuesOnConditionCheckFailure:
 * 'ALL_OLD'`), as plain values: the exception carries it marshalled. Saves reading it again.
 */
export function failedItem(error: unknown): Record<string, unknown> | undefined {
  if (!(error instanceof ConditionalCheckFailedException) || error.Item === undefined) return undefined;
  return unmarshall(error.Item);
}
