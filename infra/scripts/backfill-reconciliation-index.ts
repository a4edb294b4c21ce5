/**
 * `npm run backfill:reconciliation-index [-- --resume <token>]`: gives the transactions that waited for the processor
 * before the reconciliation index (gsi4) existed their gsi4 keys and watch (docs/data-model.md), so the scheduled
 * reconciliation asks the processor about them too (decisions.md §12). Run it once after deploying the index; running
 * it again is harmless.
 *
 * An offline maintenance job, not a request path: it Scans the table (filtered to transactions `pending` or
 * `initialized` with an intent and without `gsi4pk`), the one kind of Scan the codebase allows (`backfill-scan.ts`).
 * No function's role grants Scan: run it with an operator's credentials.
 *
 * - Each transaction's watch starts at its last change (`updatedAt`): its first look is due 10 minutes after it, so
 *   the backfilled come first, the oldest first; one that has waited longer than RECONCILIATION_GIVE_UP_DAYS is given
 *   up by the next run (its intent canceled at the processor unless it succeeded, the payment abandoned).
 * - Idempotent: each gets its keys from one conditional UpdateItem (`attribute_not_exists(gsi4pk)`, still `pending`
 *   or `initialized`, still with an intent), so one that moved on or was indexed meanwhile is left as it is, and
 *   one gone is not brought back as a stub item. A second run finds nothing to do.
 * - Resumable: after each page it prints a resume token; `--resume <token>` continues from there. Starting over
 *   instead is also safe: the filter skips transactions already done.
 *
 * The table and its endpoint come from the environment, as for the service (`lib/config.ts`), as for
 * `npm run backfill:api-keys`. Prints counts: items scanned, waiting transactions without keys found, indexed, left
 * (moved on or indexed meanwhile), unreadable.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { startWatch } from '../../lib/domain/reconciliation';
import { writeIfCondition } from '../../lib/store/conditions';
import { documentClient, tableName } from '../../lib/store/dynamo';
import { keys } from '../../lib/store/keys';
import { runBackfillCommand, scanTable } from './backfill-scan';

export interface ReconciliationBackfillCounts {
  /** Items the Scan read (every entity: the filter applies after the read). */
  scanned: number;
  /** Transactions waiting for the processor without gsi4 keys. */
  found: number;
  indexed: number;
  /** Found, but moved on or indexed by the time of the update: left as they are. */
  left: number;
  /** Found without the `svcTxId` or `updatedAt` the keys need: reported, not touched. */
  unreadable: number;
}

/** Still awaiting the processor (`awaitsProcessor`), and not indexed: the Scan's filter and the update's condition. */
const AWAITING_WITHOUT_KEYS = '#status IN (:pending, :initialized) AND attribute_type(processorPaymentIntentId, :string) AND attribute_not_exists(gsi4pk)';
const AWAITING_VALUES = { ':pending': 'pending', ':initialized': 'initialized', ':string': 'S' };

/** Sets one transaction's gsi4 keys and watch; `false` when it moved on, was indexed, or is gone meanwhile. */
function indexTransaction(svcTxId: string, updatedAt: string): Promise<boolean> {
  const watch = startWatch(updatedAt);
  const index = keys.reconciliationIndex(svcTxId, watch.dueAt);
  return writeIfCondition(
    documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.transaction(svcTxId),
        UpdateExpression: 'SET gsi4pk = :gsi4pk, gsi4sk = :gsi4sk, reconciliation = :watch',
        ConditionExpression: `attribute_exists(pk) AND ${AWAITING_WITHOUT_KEYS}`,
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ...AWAITING_VALUES, ':gsi4pk': index.gsi4pk, ':gsi4sk': index.gsi4sk, ':watch': watch.state },
      }),
    ),
  );
}

/**
 * Pages through the table's waiting transactions without gsi4 keys and indexes each. `onPage` hears the counts so far
 * and the token to resume after that page (null after the last).
 */
export async function backfillReconciliationIndex(
  options: { resume?: string | undefined; onPage?: (counts: ReconciliationBackfillCounts, resumeToken: string | null) => void } = {},
): Promise<ReconciliationBackfillCounts> {
  const counts: ReconciliationBackfillCounts = { scanned: 0, found: 0, indexed: 0, left: 0, unreadable: 0 };
  counts.scanned = await scanTable(
    {
      FilterExpression: `#entity = :transaction AND ${AWAITING_WITHOUT_KEYS}`,
      ProjectionExpression: 'svcTxId, updatedAt',
      ExpressionAttributeNames: { '#entity': 'entity', '#status': 'status' },
      ExpressionAttributeValues: { ...AWAITING_VALUES, ':transaction': 'transaction' },
    },
    {
      resume: options.resume,
      onItem: async ({ svcTxId, updatedAt }) => {
        counts.found++;
        if (typeof svcTxId !== 'string' || typeof updatedAt !== 'string' || Number.isNaN(Date.parse(updatedAt))) {
          counts.unreadable++;
          return;
        }
        if (await indexTransaction(svcTxId, updatedAt)) counts.indexed++;
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

const summary = (counts: ReconciliationBackfillCounts) =>
  `scanned ${counts.scanned} items, found ${counts.found} waiting transactions without gsi4 keys: indexed ${counts.indexed}, ` +
  `left ${counts.left} (moved on or indexed meanwhile), unreadable ${counts.unreadable}`;

runBackfillCommand(import.meta.url, 'reconciliation-index', 'the gsi4 keys of transactions waiting for the processor', backfillReconciliationIndex, summary);
