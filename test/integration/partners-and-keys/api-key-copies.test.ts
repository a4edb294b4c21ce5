/**
 * An API key's read copies (docs/data-model.md, API key rows): issued with the key, each one authenticates alone, and
 * the revocation takes them all in its one transaction, so the key stops at once whichever copy a request reads. Keys
 * issued before copies existed are tested with the backfill (`backfill-api-keys.test.ts`), the one file that writes
 * such keys.
 */
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { type BatchGetCommand, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { hashApiKey } from '../../../lib/auth/credentials';
import { newAuditEvent } from '../../../lib/domain/audit';
import { findApiKey, findApiKeyById, revokeApiKey } from '../../../lib/store/api-keys';
import { documentClient, tableName } from '../../../lib/store/dynamo';
import { API_KEY_COPIES, keys, type TableKey } from '../../../lib/store/keys';
import { findApiKeyAndPayee } from '../../../lib/store/payees';
import { usePartnerSuite } from '../../support/api';

const suite = usePartnerSuite();

const COPIES = Array.from({ length: API_KEY_COPIES }, (_, copy) => copy);
const getItem = async (key: TableKey) => (await documentClient.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }))).Item;

/** Counts the table calls made from here on (the store is called in this process). */
const spySend = () => jest.spyOn(documentClient, 'send');

afterEach(() => {
  jest.restoreAllMocks();
});

describe('issuing a key', () => {
  it('writes the key item and 7 read copies with the same fields and no list keys: the lists show the key once', async () => {
    // Arrange, Act
    const partner = await suite.api.createPartner();
    const platform = await suite.api.createPlatformKey();
    const keyHash = hashApiKey(partner.apiKey);

    // Assert
    const item = await getItem(keys.apiKey(keyHash));
    expect(item).toMatchObject({ entity: 'apiKey', keyId: partner.keyId, copies: 8, gsi1pk: `APIKEYS#${partner.partnerId}` });
    const { pk: _pk, gsi1pk: _gsi1pk, gsi1sk: _gsi1sk, entity: _entity, copies: _copies, ...fields } = item!;
    for (const copy of COPIES.slice(1)) {
      const stored = await getItem(keys.apiKeyCopy(keyHash, copy));
      expect(stored).toEqual({ ...fields, pk: `APIKEY#${keyHash}#${copy}`, entity: 'apiKeyCopy', copy });
    }
    expect(await getItem({ pk: `APIKEY#${keyHash}#${API_KEY_COPIES}`, sk: 'APIKEY' })).toBeUndefined();
    const partnerList = await suite.api.admin('GET', `/admin/partners/${partner.partnerId}/api-keys`);
    expect(partnerList.body.items.map((listed: { key_id: string }) => listed.key_id)).toEqual([partner.keyId]);
    const platformIds: string[] = [];
    for (let cursor: string | null = null, pages = 0; pages === 0 || (cursor !== null && pages < 200); pages++) {
      const page = await suite.api.admin('GET', `/admin/api-keys?limit=200${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
      platformIds.push(...page.body.items.map((listed: { key_id: string }) => listed.key_id));
      cursor = page.body.next_cursor;
    }
    expect(platformIds.filter((id) => id === platform.keyId)).toHaveLength(1);
  });
});

describe('reading a key', () => {
  it('authenticates from every copy alone, in one call: GetItem, or the BatchGetItem with the payee', async () => {
    const { partner, clientId } = suite;
    const keyHash = hashApiKey(partner.apiKey);
    const named = { partnerId: partner.partnerId, clientId };

    for (const copy of COPIES) {
      const send = spySend();
      const alone = await findApiKey(keyHash, copy);
      const withPayee = await findApiKeyAndPayee(keyHash, named, copy);
      const calls = send.mock.calls.map(([command]) => command.constructor.name);
      const [[get], [batchGet]] = send.mock.calls as unknown as [[GetCommand], [BatchGetCommand]];
      send.mockRestore();

      expect(alone?.keyId).toBe(partner.keyId);
      expect(withPayee.apiKey?.keyId).toBe(partner.keyId);
      expect(withPayee.payee.partner?.partnerId).toBe(partner.partnerId);
      expect(withPayee.payee.client?.clientId).toBe(clientId);
      expect(calls).toEqual(['GetCommand', 'BatchGetCommand']);
      // the copy asked for was read, and was there (no second read of the key item)
      expect(get.input.Key).toEqual(keys.apiKeyCopy(keyHash, copy));
      expect(batchGet.input.RequestItems?.[tableName]?.Keys).toContainEqual(keys.apiKeyCopy(keyHash, copy));
    }
  });

  it('serves requests from any copy at random over HTTP', async () => {
    const answers = await Promise.all(Array.from({ length: 24 }, () => suite.api.read(suite.partner, '/clients')));
    expect(answers.map((answer) => answer.status)).toEqual(Array(24).fill(200));
  });
});

describe('revoking a key', () => {
  it('deletes the key item, every copy and the pointer in the one transaction of its audit event: no copy reads after it', async () => {
    // Arrange
    const partner = await suite.api.createPartner();
    const keyHash = hashApiKey(partner.apiKey);
    const ref = await findApiKeyById(partner.keyId);
    const audit = newAuditEvent(
      { type: 'api_key.revoked', partnerId: partner.partnerId, resourceType: 'api_key', resourceId: partner.keyId, details: { admin: 'test', scope: 'partner' } },
      new Date(),
    );
    const send = spySend();

    // Act
    await revokeApiKey(ref!, audit);

    // Assert
    const writes = send.mock.calls.map(([command]) => command).filter((command) => command instanceof TransactWriteCommand);
    send.mockRestore();
    expect(writes).toHaveLength(1);
    const deleted = (writes[0] as TransactWriteCommand).input.TransactItems!.flatMap((item) => (item.Delete === undefined ? [] : [item.Delete.Key]));
    expect(deleted).toEqual(expect.arrayContaining([keys.apiKeyId(partner.keyId), ...COPIES.map((copy) => keys.apiKeyCopy(keyHash, copy))]));
    for (const copy of COPIES) {
      expect(await getItem(keys.apiKeyCopy(keyHash, copy))).toBeUndefined();
      expect(await findApiKey(keyHash, copy)).toBeUndefined();
      expect((await findApiKeyAndPayee(keyHash, { partnerId: partner.partnerId, clientId: suite.clientId }, copy)).apiKey).toBeUndefined();
    }
  });

  it('answers 401 API_KEY_INVALID at once on every kind of route, whichever copy a request reads', async () => {
    // Arrange: a partner with a client and a transaction, each route working before
    const partner = await suite.api.createPartner();
    const clientId = await suite.api.createClient(partner);
    const payment = () => ({ partner_id: partner.partnerId, client_id: clientId, amount: 12.34, currency: 'USD', partner_reference: `init-${randomUUID()}` });
    const initialized = await suite.api.signed(partner, '/transactions/initialize', payment());
    expect(initialized.status).toBe(201);
    const routes = {
      read: () => suite.api.read(partner, '/clients'),
      'read one': () => suite.api.read(partner, `/transactions/${initialized.body.svc_tx_id}`),
      mutation: () => suite.api.signed(partner, '/clients', { client_id: `merchant-${randomUUID()}`, legal_name: 'Merchant Ltd' }),
      'payment (key read with the payee)': () => suite.api.signed(partner, '/transactions/initialize', payment()),
    };

    // Act
    const revoked = await suite.api.admin('DELETE', `/admin/api-keys/${partner.keyId}`);
    const after = await Promise.all(
      Object.entries(routes).map(async ([kind, send]) => {
        const answers = [];
        for (let i = 0; i < 12; i++) answers.push(await send());
        return [kind, answers.map((answer) => `${answer.status} ${answer.body.code}`)] as const;
      }),
    );

    // Assert
    expect(revoked.status).toBe(204);
    for (const [kind, answers] of after) expect({ kind, answers }).toEqual({ kind, answers: Array(12).fill('401 API_KEY_INVALID') });
  });
});
