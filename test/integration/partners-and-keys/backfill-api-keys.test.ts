/**
 * `npm run backfill:api-keys` (infra/scripts/backfill-api-keys.ts) against this run's DynamoDB Local: API keys written as
 * they were before gsi1 listed them (no gsi1 keys; an id pointer without the key's scope) are listed once by the
 * admin key lists after the backfill, however often it runs, and still work: they authenticate and revoke (with
 * their audit event). The command runs as an operator would run it, in its own process, with the table and
 * endpoint from the environment (this run's, set by the global setup).
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { BackfillCounts } from '../../../infra/scripts/backfill-api-keys';
import { type KeyScope, generateApiKey, generateHmacSecret, hashApiKey } from '../../../lib/auth/credentials';
import { newId } from '../../../lib/domain/ids';
import { SECRET_PURPOSE } from '../../../lib/domain/sealed-secret';
import { secretBox } from '../../../lib/secrets';
import { documentClient, tableName } from '../../../lib/store/dynamo';
import { keys } from '../../../lib/store/keys';
import { TestApi } from '../../support/api';
import { commandEnv, REPO_ROOT, runNpmScript } from '../../support/operator-command';

const TEST_TIMEOUT_MS = 60_000;

let api: TestApi;
beforeAll(async () => {
  api = await TestApi.start();
});
afterAll(() => api.close());

/**
 * A key as issued before the index: the key item without gsi1 keys, and its pointer with only the hash. Returns
 * what the partner was given.
 */
async function oldShapedKey(scope: KeyScope, partnerId: string | undefined, createdAt: string) {
  const keyId = newId.apiKey();
  const apiKey = generateApiKey(scope);
  const hmacSecret = generateHmacSecret();
  const keyHash = hashApiKey(apiKey);
  const hmacSealed = await secretBox.seal(hmacSecret, SECRET_PURPOSE.hmac);
  await documentClient.send(
    new PutCommand({ TableName: tableName, Item: { ...keys.apiKey(keyHash), entity: 'apiKey', keyId, keyHash, scope, partnerId, hmacSecret: hmacSealed, createdAt } }),
  );
  await documentClient.send(new PutCommand({ TableName: tableName, Item: { ...keys.apiKeyId(keyId), entity: 'apiKeyId', keyId, keyHash } }));
  return { keyId, apiKey, hmacSecret };
}

/** Runs `npm run backfill:api-keys`; its output, and the counts of its last line. */
const runBackfill = () => runNpmScript<BackfillCounts>('backfill:api-keys');

/** The key ids of an admin key list, every page followed, `limit` at a time. */
async function listedIds(path: string, limit: number): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page = await api.admin('GET', `${path}?limit=${limit}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
    expect(page.status).toBe(200);
    ids.push(...page.body.items.map((item: { key_id: string }) => item.key_id));
    cursor = page.body.next_cursor;
    pages++;
  } while (cursor !== null && pages < 500);
  return ids;
}

describe('npm run backfill:api-keys', () => {
  it('indexes the keys issued before gsi1 once, however often it runs: each then listed once, still authenticating and revocable', async () => {
    // Arrange: a partner with a key issued now, and a partner key and a platform key of the old shape, issued a month ago
    const partner = await api.createPartner();
    const aMonthAgo = new Date(Date.now() - 30 * 86_400_000).toISOString();
    const oldPartnerKey = await oldShapedKey('partner', partner.partnerId, aMonthAgo);
    const oldPlatformKey = await oldShapedKey('platform', undefined, aMonthAgo);
    const partnerKeys = `/admin/partners/${partner.partnerId}/api-keys`;
    const before = { partner: await listedIds(partnerKeys, 50), platform: await listedIds('/admin/api-keys', 200) };

    // Act
    const first = await runBackfill();
    const second = await runBackfill();
    const after = { partner: await listedIds(partnerKeys, 1), platform: await listedIds('/admin/api-keys', 200) };
    const authenticates = await api.read(oldPartnerKey, '/clients');
    const revoked = await api.admin('DELETE', `/admin/api-keys/${oldPartnerKey.keyId}`);
    const revokedEvents = await api.admin('GET', `/admin/audit-events?partner_id=${partner.partnerId}&type=api_key.revoked`);

    // Assert
    expect(before.partner).toEqual([partner.keyId]);
    expect(before.platform).not.toContain(oldPlatformKey.keyId);
    // Only this file writes old-shaped keys into the run's table.
    expect(first.counts).toMatchObject({ found: 2, indexed: 2, left: 0, unreadable: 0 });
    expect(first.counts.scanned).toBeGreaterThanOrEqual(4);
    expect(first.output).toMatch(/^Done: scanned \d+ items, found 2 API keys without gsi1 keys: indexed 2/m);
    expect(second.counts).toMatchObject({ found: 0, indexed: 0 });
    expect(after.partner).toEqual([partner.keyId, oldPartnerKey.keyId]);
    expect(after.platform.filter((id) => id === oldPlatformKey.keyId)).toHaveLength(1);
    expect(after.platform.at(-1)).toBe(oldPlatformKey.keyId);
    expect(authenticates.status).toBe(200);
    expect(revoked.status).toBe(204);
    expect(revokedEvents.body.items).toEqual([
      expect.objectContaining({ partner_id: partner.partnerId, resource_id: oldPartnerKey.keyId, details: { admin: 'local-admin', scope: 'partner' } }),
    ]);
    expect(await listedIds(partnerKeys, 50)).toEqual([partner.keyId]);
  }, TEST_TIMEOUT_MS);

  it('takes --resume with the token a run printed, and refuses a --resume without one', async () => {
    const run = (args: string[]) =>
      promisify(execFile)(process.execPath, ['--import', 'tsx', 'infra/scripts/backfill-api-keys.ts', ...args], { cwd: REPO_ROOT, env: commandEnv(), timeout: 30_000 }).then(
        ({ stdout }) => ({ code: 0, stdout, stderr: '' }),
        (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
      );
    // A position inside the table: a key item's own key, as the Scan's LastEvaluatedKey would name it.
    const token = Buffer.from(JSON.stringify({ pk: `APIKEY#${randomUUID()}`, sk: 'APIKEY' })).toString('base64url');

    const resumed = await run(['--resume', token]);
    const missing = await run(['--resume']);

    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('(resumed)');
    expect(resumed.stdout).toMatch(/^Done: /m);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('--resume needs the token a previous run printed');
  }, TEST_TIMEOUT_MS);
});
