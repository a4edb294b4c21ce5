/**
 * `npm run backfill:api-keys` (infra/scripts/backfill-api-keys.ts) against this run's DynamoDB Local: API keys written as
 * they were before gsi1 listed them (no gsi1 keys; an id pointer without the key's scope) or before keys had read copies
 * authenticate from their key item whichever copy a read picks, and after the backfill are listed once and have their
 * copies, however often it runs; they still authenticate and revoke (with their audit event). A copy whose key is
 * gone is deleted, and a copy is never written for a key revoked first. The command runs as an operator would run it,
 * in its own process, with the table and endpoint from the environment (this run's, set by the global setup).
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { type BackfillCounts, copyKey } from '../../../infra/scripts/backfill-api-keys';
import { type KeyScope, generateApiKey, generateHmacSecret, hashApiKey } from '../../../lib/auth/credentials';
import { newId } from '../../../lib/domain/ids';
import { SECRET_PURPOSE } from '../../../lib/domain/sealed-secret';
import { secretBox } from '../../../lib/secrets';
import { apiKeyIndexOf, findApiKey } from '../../../lib/store/api-keys';
import { documentClient, tableName } from '../../../lib/store/dynamo';
import { API_KEY_COPIES, keys, type TableKey } from '../../../lib/store/keys';
import { TestApi } from '../../support/api';
import { commandEnv, REPO_ROOT, runNpmScript } from '../../support/operator-command';

const TEST_TIMEOUT_MS = 60_000;

let api: TestApi;
beforeAll(async () => {
  api = await TestApi.start();
});
afterAll(() => api.close());

/**
 * A key as issued before the index: the key item without gsi1 keys or copies, and its pointer with only the hash (or,
 * `indexed`, as issued after the index and before copies: with its gsi1 keys). Returns what the partner was given.
 */
async function oldShapedKey(scope: KeyScope, partnerId: string | undefined, createdAt: string, shape: 'unindexed' | 'indexed' = 'unindexed') {
  const keyId = newId.apiKey();
  const apiKey = generateApiKey(scope);
  const hmacSecret = generateHmacSecret();
  const keyHash = hashApiKey(apiKey);
  const hmacSealed = await secretBox.seal(hmacSecret, SECRET_PURPOSE.hmac);
  const index = shape === 'indexed' ? apiKeyIndexOf({ keyId, partnerId, createdAt }) : {};
  await documentClient.send(
    new PutCommand({ TableName: tableName, Item: { ...keys.apiKey(keyHash), ...index, entity: 'apiKey', keyId, keyHash, scope, partnerId, hmacSecret: hmacSealed, createdAt } }),
  );
  await documentClient.send(new PutCommand({ TableName: tableName, Item: { ...keys.apiKeyId(keyId), entity: 'apiKeyId', keyId, keyHash } }));
  return { keyId, keyHash, apiKey, hmacSecret };
}

const COPIES = Array.from({ length: API_KEY_COPIES }, (_, copy) => copy);
const getItem = async (key: TableKey) => (await documentClient.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }))).Item;
/** Which of a key's read copies (1 to 7) exist. */
const copiesOf = async (keyHash: string) => {
  const found: number[] = [];
  for (const copy of COPIES.slice(1)) if ((await getItem(keys.apiKeyCopy(keyHash, copy))) !== undefined) found.push(copy);
  return found;
};

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
  it('indexes and copies the keys issued before gsi1 or copies once, however often it runs: each then listed once, still authenticating and revocable', async () => {
    // Arrange: a partner with a key issued now; a partner key and a platform key of the shape before gsi1, issued a
    // month ago; a partner key issued after gsi1 and before copies; a copy left by a revocation of before copies
    const partner = await api.createPartner();
    const aMonthAgo = new Date(Date.now() - 30 * 86_400_000).toISOString();
    const oldPartnerKey = await oldShapedKey('partner', partner.partnerId, aMonthAgo);
    const oldPlatformKey = await oldShapedKey('platform', undefined, aMonthAgo);
    const uncopiedKey = await oldShapedKey('partner', partner.partnerId, new Date(Date.now() - 86_400_000).toISOString(), 'indexed');
    const orphanHash = hashApiKey(`svc_partner_${randomUUID()}`);
    const orphan = { ...keys.apiKeyCopy(orphanHash, 3), entity: 'apiKeyCopy', copy: 3, keyId: newId.apiKey(), keyHash: orphanHash, scope: 'partner', partnerId: partner.partnerId };
    await documentClient.send(new PutCommand({ TableName: tableName, Item: orphan }));
    const partnerKeys = `/admin/partners/${partner.partnerId}/api-keys`;
    const before = { partner: await listedIds(partnerKeys, 50), platform: await listedIds('/admin/api-keys', 200) };
    // Before the backfill, every copy a read may pick falls back to the key item.
    const foundBefore = await Promise.all(COPIES.map(async (copy) => (await findApiKey(oldPartnerKey.keyHash, copy))?.keyId));
    const authenticatesBefore = await Promise.all(Array.from({ length: 16 }, () => api.read(oldPartnerKey, '/clients')));

    // Act
    const first = await runBackfill();
    const second = await runBackfill();
    const after = { partner: await listedIds(partnerKeys, 1), platform: await listedIds('/admin/api-keys', 200) };
    const copies = { partner: await copiesOf(oldPartnerKey.keyHash), platform: await copiesOf(oldPlatformKey.keyHash), uncopied: await copiesOf(uncopiedKey.keyHash) };
    const authenticates = await api.read(oldPartnerKey, '/clients');
    const revoked = await api.admin('DELETE', `/admin/api-keys/${oldPartnerKey.keyId}`);
    const revokedEvents = await api.admin('GET', `/admin/audit-events?partner_id=${partner.partnerId}&type=api_key.revoked`);

    // Assert
    expect(foundBefore).toEqual(Array(API_KEY_COPIES).fill(oldPartnerKey.keyId));
    expect(authenticatesBefore.map((answer) => answer.status)).toEqual(Array(16).fill(200));
    expect(before.partner).toEqual([partner.keyId, uncopiedKey.keyId]);
    expect(before.platform).not.toContain(oldPlatformKey.keyId);
    // Only this file writes old-shaped keys into the run's table.
    expect(first.counts).toMatchObject({ found: 3, indexed: 2, copied: 3, left: 0, unreadable: 0, orphansDeleted: 1 });
    expect(first.counts.scanned).toBeGreaterThanOrEqual(4);
    expect(first.output).toMatch(/^Done: scanned \d+ items, found 3 API keys without gsi1 keys or copies: indexed 2, copied 3, left 0 .*; deleted 1 copies without their key$/m);
    expect(second.counts).toMatchObject({ found: 0, indexed: 0, copied: 0, orphansDeleted: 0 });
    expect(await getItem(keys.apiKeyCopy(orphanHash, 3))).toBeUndefined();
    expect(copies).toEqual({ partner: [1, 2, 3, 4, 5, 6, 7], platform: [1, 2, 3, 4, 5, 6, 7], uncopied: [1, 2, 3, 4, 5, 6, 7] });
    expect(await getItem(keys.apiKeyCopy(oldPlatformKey.keyHash, 5))).toMatchObject({ entity: 'apiKeyCopy', keyId: oldPlatformKey.keyId, scope: 'platform' });
    expect(await getItem(keys.apiKeyCopy(oldPlatformKey.keyHash, 5))).not.toHaveProperty('gsi1pk');
    expect(after.partner).toEqual([partner.keyId, uncopiedKey.keyId, oldPartnerKey.keyId]);
    expect(after.platform.filter((id) => id === oldPlatformKey.keyId)).toHaveLength(1);
    expect(after.platform.at(-1)).toBe(oldPlatformKey.keyId);
    expect(authenticates.status).toBe(200);
    expect(revoked.status).toBe(204);
    expect(revokedEvents.body.items).toEqual([
      expect.objectContaining({ partner_id: partner.partnerId, resource_id: oldPartnerKey.keyId, details: { admin: 'local-admin', scope: 'partner' } }),
    ]);
    expect(await copiesOf(oldPartnerKey.keyHash)).toEqual([]);
    expect(await listedIds(partnerKeys, 50)).toEqual([partner.keyId, uncopiedKey.keyId]);
  }, TEST_TIMEOUT_MS);

  it('never copies a key revoked first, and a key copied first is revoked with its copies', async () => {
    // Arrange: two keys of before copies, as the backfill's Scan reads them
    const partner = await api.createPartner();
    const createdAt = new Date().toISOString();
    const revokedFirst = await oldShapedKey('partner', partner.partnerId, createdAt, 'indexed');
    const copiedFirst = await oldShapedKey('partner', partner.partnerId, createdAt, 'indexed');
    const [revokedItem, copiedItem] = [await getItem(keys.apiKey(revokedFirst.keyHash)), await getItem(keys.apiKey(copiedFirst.keyHash))];

    // Act: one revoked before the backfill's write for it, the other after
    const revoked = await api.admin('DELETE', `/admin/api-keys/${revokedFirst.keyId}`);
    const copiedAfterRevocation = await copyKey(revokedItem!);
    const copied = await copyKey(copiedItem!);
    const copiesBeforeRevocation = await copiesOf(copiedFirst.keyHash);
    const revokedAfter = await api.admin('DELETE', `/admin/api-keys/${copiedFirst.keyId}`);

    // Assert
    expect([revoked.status, revokedAfter.status]).toEqual([204, 204]);
    expect(copiedAfterRevocation).toBe(false);
    expect(copied).toBe(true);
    expect(copiesBeforeRevocation).toEqual([1, 2, 3, 4, 5, 6, 7]);
    for (const key of [revokedFirst, copiedFirst]) {
      expect(await getItem(keys.apiKey(key.keyHash))).toBeUndefined();
      expect(await copiesOf(key.keyHash)).toEqual([]);
      for (const copy of COPIES) expect(await findApiKey(key.keyHash, copy)).toBeUndefined();
      expect((await api.read(key, '/clients')).body.code).toBe('API_KEY_INVALID');
    }
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
