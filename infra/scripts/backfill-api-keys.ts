/**
 * `npm run backfill:api-keys [-- --resume <token>]`: gives the API keys issued before gsi1 listed them their gsi1
 * keys (a partner's key `APIKEYS#<partner_id>`, a platform-wide key `APIKEYS`; docs/data-model.md), so
 * `GET /admin/partners/{partner_id}/api-keys` and `GET /admin/api-keys` list them. Run it once after deploying
 * the index; running it again is harmless.
 *
 * An offline maintenance job, not a request path: it Scans the table (filtered to API key items without
 * `gsi1pk`), the one Scan in the codebase. No function's role grants Scan: run it with an operator's credentials.
 *
 * - Idempotent: each key gets its index keys from one conditional UpdateItem (`attribute_exists(pk) AND
 *   attribute_not_exists(gsi1pk)`), so a key indexed meanwhile is left as it is, and a key revoked meanwhile is
 *   not brought back as a stub item. A second run finds nothing to do.
 * - Resumable: after each page it prints a resume token (the Scan's position); `--resume <token>` continues from
 *   there. Starting over instead is also safe: the filter skips keys already done.
 *
 * The table and its endpoint come from the environment, as for the service (`lib/config.ts`): locally
 * `TABLE_NAME` and `DYNAMODB_ENDPOINT` (defaults: `partner-payments` on `npm start`'s DynamoDB Local); in AWS
 * `SVC_RUNTIME=aws`, `AWS_REGION`, `TABLE_NAME` (and `KMS_KEY_ID`, which the configuration requires there; unused).
 * Prints counts: items scanned, old keys found, indexed, left (indexed or revoked meanwhile), unreadable.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { apiKeyIndexOf } from '../../lib/store/api-keys';
import { writeIfCondition } from '../../lib/store/conditions';
import { documentClient, tableName } from '../../lib/store/dynamo';
import { runBackfillCommand, scanTable } from './backfill-scan';

export interface BackfillCounts {
  /** Items the Scan read (every entity: the filter applies after the read). */
  scanned: number;
  /** API key items without gsi1 keys. */
  found: number;
  indexed: number;
  /** Found, but indexed or revoked by the time of the update: left as they are. */
  left: number;
  /** Found without the `keyId` or `createdAt` an index key needs: reported, not touched. */
  unreadable: number;
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

/**
 * Pages through the table's API key items without gsi1 keys and indexes each. `onPage` hears the counts so far and
 * the token to resume after that page (null after the last).
 */
export async function backfillApiKeyIndex(
  options: { resume?: string | undefined; onPage?: (counts: BackfillCounts, resumeToken: string | null) => void } = {},
): Promise<BackfillCounts> {
  const counts: BackfillCounts = { scanned: 0, found: 0, indexed: 0, left: 0, unreadable: 0 };
  await scanTable(
    {
      FilterExpression: '#entity = :apiKey AND attribute_not_exists(gsi1pk)',
      ProjectionExpression: 'pk, sk, keyId, partnerId, createdAt',
      ExpressionAttributeNames: { '#entity': 'entity' },
      ExpressionAttributeValues: { ':apiKey': 'apiKey' },
    },
    {
      resume: options.resume,
      onItem: async (item) => {
        counts.found++;
        const { keyId, createdAt } = item;
        if (typeof keyId !== 'string' || typeof createdAt !== 'string') {
          counts.unreadable++;
          return;
        }
        if (await indexKey(item, keyId, createdAt)) counts.indexed++;
        else counts.left++;
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
  `scanned ${counts.scanned} items, found ${counts.found} API keys without gsi1 keys: indexed ${counts.indexed}, ` +
  `left ${counts.left} (indexed or revoked meanwhile), unreadable ${counts.unreadable}`;

runBackfillCommand(import.meta.url, 'api-keys', 'the gsi1 keys of API keys', backfillApiKeyIndex, summary);
