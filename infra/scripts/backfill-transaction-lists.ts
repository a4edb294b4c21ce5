/**
 * `npm run backfill:transaction-lists [-- --resume <token>]`: moves the transactions written before the sharded lists
 * from the partitions that held every partner's (gsi2 `TXS`) and each partner's (gsi1 `TXS#<partner>`) to their
 * shards of gsi5 and gsi6 (docs/data-model.md, sharded lists), so that no partition takes every partner's writes
 * (decisions.md §11). Run it once after deploying gsi5 and gsi6; running it again is harmless. The lists read the old
 * partitions as well as the shards, before, during and after it.
 *
 * An offline maintenance job, not a request path: it Scans the table (filtered to transactions that still carry
 * gsi1 keys), the one kind of Scan the codebase allows (`backfill-scan.ts`). No function's role grants Scan: run it
 * with an operator's credentials.
 *
 * - Each transaction moves in one conditional UpdateItem: its shard keys set and its gsi1/gsi2 keys removed together
 *   (on `gsi1pk` as read), and a second run finds nothing. (Each index follows its item a moment later, on its own: a
 *   list page read in that moment may miss a transaction being moved; the next read finds it.)
 * - Resumable: after each page it prints a resume token; `--resume <token>` continues from there. Starting over
 *   instead is also safe: the filter skips transactions already moved.
 *
 * Prints counts: items scanned, transactions on the old partitions found, moved, left (moved meanwhile), unreadable.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { writeIfCondition } from '../../lib/store/conditions';
import { documentClient, tableName } from '../../lib/store/dynamo';
import { keys } from '../../lib/store/keys';
import { runBackfillCommand, scanTable } from './backfill-scan';

export interface TransactionListBackfillCounts {
  /** Items the Scan read (every entity: the filter applies after the read). */
  scanned: number;
  /** Transactions still on the partitions before the shards. */
  found: number;
  moved: number;
  /** Found, but moved by the time of the update (another run): left as they are. */
  left: number;
  /** Found without the `svcTxId`, `partnerId` or `createdAt` the keys need: reported, not touched. */
  unreadable: number;
}

/** Moves one transaction to its shards; `false` when it was moved meanwhile or is gone. */
function moveTransaction(svcTxId: string, partnerId: string, createdAt: string, gsi1pk: string): Promise<boolean> {
  const index = keys.transactionIndex(partnerId, svcTxId, createdAt);
  return writeIfCondition(
    documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.transaction(svcTxId),
        UpdateExpression: 'SET gsi5pk = :gsi5pk, gsi5sk = :gsi5sk, gsi6pk = :gsi6pk, gsi6sk = :gsi6sk REMOVE gsi1pk, gsi1sk, gsi2pk, gsi2sk',
        ConditionExpression: 'attribute_exists(pk) AND gsi1pk = :old',
        ExpressionAttributeValues: { ':gsi5pk': index.gsi5pk, ':gsi5sk': index.gsi5sk, ':gsi6pk': index.gsi6pk, ':gsi6sk': index.gsi6sk, ':old': gsi1pk },
      }),
    ),
  );
}

/** Pages through the transactions still on the old partitions and moves each. `onPage` hears the counts so far and the resume token. */
export async function backfillTransactionLists(
  options: { resume?: string | undefined; onPage?: (counts: TransactionListBackfillCounts, resumeToken: string | null) => void } = {},
): Promise<TransactionListBackfillCounts> {
  const counts: TransactionListBackfillCounts = { scanned: 0, found: 0, moved: 0, left: 0, unreadable: 0 };
  counts.scanned = await scanTable(
    {
      FilterExpression: '#entity = :transaction AND attribute_exists(gsi1pk)',
      ProjectionExpression: 'svcTxId, partnerId, createdAt, gsi1pk',
      ExpressionAttributeNames: { '#entity': 'entity' },
      ExpressionAttributeValues: { ':transaction': 'transaction' },
    },
    {
      resume: options.resume,
      onItem: async ({ svcTxId, partnerId, createdAt, gsi1pk }) => {
        counts.found++;
        if (typeof svcTxId !== 'string' || typeof partnerId !== 'string' || typeof createdAt !== 'string' || typeof gsi1pk !== 'string') {
          counts.unreadable++;
          return;
        }
        if (await moveTransaction(svcTxId, partnerId, createdAt, gsi1pk)) counts.moved++;
        else counts.left++;
      },
      onPage: (scanned, token) => {
        counts.scanned = scanned;
        options.onPage?.({ ...counts }, token);
      },
    },
  );
  return counts;
}

const summary = (counts: TransactionListBackfillCounts) =>
  `scanned ${counts.scanned} items, found ${counts.found} transactions on the lists before the shards: moved ${counts.moved}, ` +
  `left ${counts.left} (moved meanwhile), unreadable ${counts.unreadable}`;

runBackfillCommand(import.meta.url, 'transaction-lists', 'the transactions listed before the shards', backfillTransactionLists, summary);
