/**
 * `npm run backfill:api-keys [-- --resume <token>]`: brings the API keys issued before today's shape up to it
 * (docs/data-model.md), and is run after each deploy that changes it; running it again is harmless.
 *
 * - gsi1 keys (a partner's key `APIKEYS#<partner_id>`, a platform-wide key `APIKEYS`) for keys issued before gsi1
 *   listed them, so `GET /admin/partners/{partner_id}/api-keys` and `GET /admin/api-keys` list them.
 * - Read copies (`API_KEY_COPIES`, lib/store/keys.ts) for keys issued before keys had them: until then each read of
 *   such a key that picks a copy reads the key item a second time.
 * - Copies left without their key item are deleted: a revocation by the functions of before copies (while a deploy
 *   rolls out) deletes the key item alone, and its copies would still authenticate.
 *
 * An offline maintenance job, not a request path: it Scans the table (filtered to API key items short of gsi1 keys or
 * copies, and to copies), the one kind of Scan in the codebase. No function's role grants Scan: run it with an
 * operator's credentials.
 *
 * - Idempotent: a key gets its index keys from one conditional UpdateItem (`attribute_exists(pk) AND
 *   attribute_not_exists(gsi1pk)`), so a key indexed meanwhile is left as it is, and a key revoked meanwhile is not
 *   brought back as a stub item. Its copies are put in one TransactWriteItems with an update of the key item that sets
 *   its `copies` count on the condition that it still exists and has fewer: a revocation and the backfill's write
 *   serialize, so a revoked key never gets a copy back. A second run finds nothing to do.
 * - Resumable: after each page it prints a resume token (the Scan's position); `--resume <token>` continues from
 *   there. Starting over instead is also safe: the filter skips keys already done.
 *
 * The table and its endpoint come from the environment, as for the service (`lib/config.ts`): locally
 * `TABLE_NAME` and `DYNAMODB_ENDPOINT` (defaults: `partner-payments` on `npm start`'s DynamoDB Local); in AWS
 * `SVC_RUNTIME=aws`, `AWS_REGION`, `TABLE_NAME` (and `KMS_KEY_ID`, which the configuration requires there; unused).
 * Prints counts: items scanned, old keys found, indexed, copied, left (done or revoked meanwhile), unreadable, and the
 * orphaned copies deleted.
 */
import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { API_KEY_COPY_NUMBERS, apiKeyCopyItem, apiKeyIndexOf, toApiKey } from '../../lib/store/api-keys';
import { writeIfCondition } from '../../lib/store/conditions';
import { documentClient, tableName } from '../../lib/store/dynamo';
import { API_KEY_COPIES, keys } from '../../lib/store/keys';
import { transactWrite } from '../../lib/store/transact';
import { runBackfillCommand, scanTable } from './backfill-scan';

export interface BackfillCounts {
  /** Items the Scan read (every entity: the filter applies after the read). */
  scanned: number;
  /** API key items without gsi1 keys or without their copies. */
  found: number;
  /** Given their gsi1 keys. */
  indexed: number;
  /** Given their read copies (`API_KEY_COPIES - 1` items each). */
  copied: number;
  /** Found, but indexed, copied or revoked by the time of the write: left as they are. */
  left: number;
  /** Found without the `keyId`, `keyHash` or `createdAt` an index key or a copy needs: reported, not touched. */
  unreadable: number;
  /** Copies whose key item no longer exists (revoked by the functions of before copies), deleted. */
  orphansDeleted: number;
}

/** Sets one old key's gsi1 keys; `false` when it was indexed or revoked meanwhile. */
function indexKey(item: Record<string, unknown>, keyId: string, createdAt: string): Promise<boolean> {
  const index = apiKeyIndexOf({ keyId, createdAt, partnerId: item.partnerId as string | undefined });
  return writeIfCondition(
    documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: { pk: item.pk, sk: item.sk },
        UpdateExpression: 'SET gsi1pk = :gsi1pk, gsi1sk = :gsi1sk',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(gsi1pk)',
        ExpressionAttributeValues: { ':gsi1pk': index.gsi1pk, ':gsi1sk': index.gsi1sk },
      }),
    ),
  );
}

/** A key item with fewer read copies than it should have (none: a key issued before them). */
const COPIES_MISSING = 'attribute_not_exists(copies) OR copies < :copies';

/**
 * Puts one old key's read copies, in one transaction with the update that marks the key item copied on the condition
 * that it still exists (the check the copies need: a revocation deletes the key item, and the two transactions
 * serialize, so a copy is never written for a revoked key) and is not copied yet. `false` when it was revoked or copied
 * meanwhile: then nothing is written. The copies are put unconditionally: one already there (a count raised since) is
 * the same key's same fields.
 */
export function copyKey(item: Record<string, unknown>): Promise<boolean> {
  const apiKey = toApiKey(item);
  return writeIfCondition(
    transactWrite([
      {
        Update: {
          TableName: tableName,
          Key: keys.apiKey(apiKey.keyHash),
          UpdateExpression: 'SET copies = :copies',
          ConditionExpression: `attribute_exists(pk) AND (${COPIES_MISSING})`,
          ExpressionAttributeValues: { ':copies': API_KEY_COPIES },
        },
      },
      ...API_KEY_COPY_NUMBERS.map((copy) => ({ Put: { TableName: tableName, Item: apiKeyCopyItem(apiKey, copy) } })),
    ]),
  );
}

/**
 * Deletes a copy whose key item is gone (read strongly consistent; a key item never comes back once deleted: a key's
 * hash is of a fresh random secret, and the backfill's copies require the key item). `false` for a copy with its key, or one already deleted (its key revoked while the Scan ran).
 */
async function deleteIfOrphan(copy: Record<string, unknown>, keyExists: (keyHash: string) => Promise<boolean>): Promise<boolean> {
  if (typeof copy.keyHash !== 'string' || (await keyExists(copy.keyHash))) return false;
  return writeIfCondition(documentClient.send(new DeleteCommand({ TableName: tableName, Key: { pk: copy.pk, sk: copy.sk }, ConditionExpression: 'attribute_exists(pk)' })));
}

/** Whether a key item exists, read once a run for each key (its copies lie scattered over the Scan's pages). */
function keyItemReader(): (keyHash: string) => Promise<boolean> {
  const known = new Map<string, Promise<boolean>>();
  return (keyHash) => {
    let exists = known.get(keyHash);
    if (exists === undefined) {
      exists = documentClient
        .send(new GetCommand({ TableName: tableName, Key: keys.apiKey(keyHash), ConsistentRead: true, ProjectionExpression: 'pk' }))
        .then(({ Item }) => Item !== undefined);
      known.set(keyHash, exists);
    }
    return exists;
  };
}

/**
 * Pages through the table's API key items short of gsi1 keys or copies, and its copies: indexes and copies each key as
 * it needs, deletes each orphaned copy. `onPage` hears the counts so far and the token to resume after that page (null
 * after the last).
 */
export async function backfillApiKeys(
  options: { resume?: string | undefined; onPage?: (counts: BackfillCounts, resumeToken: string | null) => void } = {},
): Promise<BackfillCounts> {
  const counts: BackfillCounts = { scanned: 0, found: 0, indexed: 0, copied: 0, left: 0, unreadable: 0, orphansDeleted: 0 };
  const keyExists = keyItemReader();
  await scanTable(
    {
      FilterExpression: `(#entity = :apiKey AND (attribute_not_exists(gsi1pk) OR ${COPIES_MISSING})) OR #entity = :apiKeyCopy`,
      ExpressionAttributeNames: { '#entity': 'entity' },
      ExpressionAttributeValues: { ':apiKey': 'apiKey', ':apiKeyCopy': 'apiKeyCopy', ':copies': API_KEY_COPIES },
    },
    {
      resume: options.resume,
      onItem: async (item) => {
        if (item.entity === 'apiKeyCopy') {
          if (await deleteIfOrphan(item, keyExists)) counts.orphansDeleted++;
          return;
        }
        counts.found++;
        const { keyId, keyHash, createdAt } = item;
        if (typeof keyId !== 'string' || typeof keyHash !== 'string' || typeof createdAt !== 'string') {
          counts.unreadable++;
          return;
        }
        const needsCopies = typeof item.copies !== 'number' || item.copies < API_KEY_COPIES;
        const indexed = item.gsi1pk === undefined ? await indexKey(item, keyId, createdAt) : undefined;
        const copied = needsCopies ? await copyKey(item) : undefined;
        if (indexed === true) counts.indexed++;
        if (copied === true) counts.copied++;
        if (indexed === false || copied === false) counts.left++;
      },
      onPage: (scanned, token) => {
        counts.scanned = scanned;
        options.onPage?.({ ...counts }, token);
      },
    },
  ).then((scanned) => {
    counts.scanned = scanned;
  });
  return counts;
}

const summary = (counts: BackfillCounts) =>
  `scanned ${counts.scanned} items, found ${counts.found} API keys without gsi1 keys or copies: indexed ${counts.indexed}, ` +
  `copied ${counts.copied}, left ${counts.left} (done or revoked meanwhile), unreadable ${counts.unreadable}; ` +
  `deleted ${counts.orphansDeleted} copies without their key`;

runBackfillCommand(import.meta.url, 'api-keys', 'the gsi1 keys and read copies of API keys', backfillApiKeys, summary);
