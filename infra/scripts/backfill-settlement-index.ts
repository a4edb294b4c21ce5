/**
 * `npm run backfill:settlement-index [-- --resume <token>]`: moves the entries waiting for settlement that were written
 * before the settlement index's shards, from each partner's one partition (gsi3 `SETTLE#<partner>`) to their payment's
 * shard (`SETTLE#<partner>#<shard>`, docs/data-model.md), so that no partition takes all of a partner's settlement
 * writes (decisions.md §11). Run it once after deploying the shards; running it again is harmless. Settlement runs and
 * balances read the old partition as well as the shards, before, during and after it, and a batch's build reserves a
 * line from either.
 *
 * An offline maintenance job, not a request path: it Scans the table (filtered to items whose gsi3 key starts with
 * `SETTLE#`), the one kind of Scan the codebase allows (`backfill-scan.ts`). No function's role grants Scan: run it
 * with an operator's credentials.
 *
 * - Each entry moves in one conditional UpdateItem, on its gsi3 key as read: an entry a run reserved meanwhile (its key
 *   now its build's) or moved already is left as it is, and a second run finds nothing.
 * - Resumable: after each page it prints a resume token; `--resume <token>` continues from there. Starting over
 *   instead is also safe.
 *
 * Prints counts: items scanned, entries on the old partitions found, moved, left (moved or reserved meanwhile), unreadable.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { writeIfCondition } from '../../lib/store/conditions';
import { documentClient, tableName } from '../../lib/store/dynamo';
import { keys } from '../../lib/store/keys';
import { runBackfillCommand, scanTable } from './backfill-scan';

export interface SettlementIndexBackfillCounts {
  /** Items the Scan read (every entity: the filter applies after the read). */
  scanned: number;
  /** Waiting entries still on a partner's partition before the shards. */
  found: number;
  moved: number;
  /** Found, but no longer there by the time of the update (moved by another run, or reserved by a build): left. */
  left: number;
  /** Found without the `svcTxId` or `partnerId` the shard needs: reported, not touched. */
  unreadable: number;
}

/** Moves one waiting entry to its payment's shard; `false` when it left the old partition meanwhile. */
function moveEntry(key: { pk: unknown; sk: unknown }, partnerId: string, svcTxId: string, old: string): Promise<boolean> {
  return writeIfCondition(
    documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: { pk: key.pk, sk: key.sk },
        UpdateExpression: 'SET gsi3pk = :shard',
        ConditionExpression: 'gsi3pk = :old',
        ExpressionAttributeValues: { ':shard': keys.settlementShardOf(partnerId, svcTxId), ':old': old },
      }),
    ),
  );
}

/** Pages through the entries still on the old partitions and moves each. `onPage` hears the counts so far and the resume token. */
export async function backfillSettlementIndex(
  options: { resume?: string | undefined; onPage?: (counts: SettlementIndexBackfillCounts, resumeToken: string | null) => void } = {},
): Promise<SettlementIndexBackfillCounts> {
  const counts: SettlementIndexBackfillCounts = { scanned: 0, found: 0, moved: 0, left: 0, unreadable: 0 };
  counts.scanned = await scanTable(
    {
      FilterExpression: 'begins_with(gsi3pk, :settle)',
      ProjectionExpression: 'pk, sk, svcTxId, partnerId, gsi3pk',
      ExpressionAttributeValues: { ':settle': 'SETTLE#' },
    },
    {
      resume: options.resume,
      onItem: async ({ pk, sk, svcTxId, partnerId, gsi3pk }) => {
        // Only the partition before the shards (`SETTLE#<partner>`); a shard's key goes on past the partner's id.
        if (typeof partnerId === 'string' && gsi3pk !== keys.settlementPartitionBeforeShards(partnerId)) return;
        counts.found++;
        if (typeof svcTxId !== 'string' || typeof partnerId !== 'string') {
          counts.unreadable++;
          return;
        }
        if (await moveEntry({ pk, sk }, partnerId, svcTxId, gsi3pk as string)) counts.moved++;
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

const summary = (counts: SettlementIndexBackfillCounts) =>
  `scanned ${counts.scanned} items, found ${counts.found} entries waiting on the settlement partitions before the shards: moved ${counts.moved}, ` +
  `left ${counts.left} (moved or reserved meanwhile), unreadable ${counts.unreadable}`;

runBackfillCommand(import.meta.url, 'settlement-index', 'the entries waiting for settlement before the shards', backfillSettlementIndex, summary);
