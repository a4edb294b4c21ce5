/**
 * Sealed list cursors over HTTP (decisions.md §9): a cursor continues only the list, partner and filters it came
 * from; anything else is 400 VALIDATION_ERROR on `cursor`, never a DynamoDB error. And it is encrypted: nothing of
 * the table (key values such as an API key's hash, attribute names) can be read from it.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { createHash, randomUUID } from 'node:crypto';
import { type ApiResponse, type PartnerCredentials, usePartnerSuite } from '../../support/api';

const suite = usePartnerSuite();
let other: PartnerCredentials;

beforeAll(async () => {
  // Arrange: two partners, each with three clients (the suite's partner has one already) and three transactions
  other = await suite.api.createPartner();
  for (const partner of [suite.partner, other]) {
    const clientId = partner === suite.partner ? suite.clientId : await suite.api.createClient(partner);
    for (let i = 0; i < 2; i++) await suite.api.createClient(partner, { status: 'suspended' });
    for (let i = 0; i < 3; i++) {
      const created = await suite.api.signed(partner, '/transactions/initialize', {
        partner_id: partner.partnerId,
        client_id: clientId,
        amount: 10,
        currency: 'USD',
        partner_reference: `order-${randomUUID()}`,
      });
      if (created.status !== 201) throw new Error(`transaction not created: ${JSON.stringify(created.body)}`);
    }
  }
});

const expectCursorRefused = (response: ApiResponse) => {
  expect(response.status).toBe(400);
  expect(response.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { fieldErrors: { cursor: [expect.any(String)] } } });
};

const nextCursorOf = async (credentials: Pick<PartnerCredentials, 'apiKey'>, path: string) => {
  const response = await suite.api.read(credentials, path);
  expect(response.status).toBe(200);
  expect(typeof response.body.next_cursor).toBe('string');
  return encodeURIComponent(response.body.next_cursor as string);
};

describe('list cursors', () => {
  it('continue the list they came from', async () => {
    const cursor = await nextCursorOf(suite.partner, '/clients?limit=1');

    const next = await suite.api.read(suite.partner, `/clients?limit=1&cursor=${cursor}`);

    expect(next.status).toBe(200);
    expect(next.body.items).toHaveLength(1);
  });

  it("refuse partner A's cursor in partner B's list", async () => {
    const clients = await nextCursorOf(suite.partner, '/clients?limit=1');
    const transactions = await nextCursorOf(suite.partner, '/transactions?limit=1');

    expectCursorRefused(await suite.api.read(other, `/clients?limit=1&cursor=${clients}`));
    expectCursorRefused(await suite.api.read(other, `/transactions?limit=1&cursor=${transactions}`));
  });

  it('refuse a cursor under other filters', async () => {
    const suspended = await nextCursorOf(suite.partner, '/clients?limit=1&status=suspended');
    const unfiltered = await nextCursorOf(suite.partner, '/transactions?limit=1');

    expectCursorRefused(await suite.api.read(suite.partner, `/clients?limit=1&cursor=${suspended}`));
    expectCursorRefused(await suite.api.read(suite.partner, `/transactions?limit=1&status=initialized&cursor=${unfiltered}`));
  });

  it('refuse an altered, hand-made, multi-byte or oversized cursor', async () => {
    const cursor = decodeURIComponent(await nextCursorOf(suite.partner, '/clients?limit=1'));
    const altered = `${cursor.slice(0, 5)}${cursor[5] === 'A' ? 'B' : 'A'}${cursor.slice(6)}`;
    const handMade = Buffer.from(JSON.stringify({ pk: 'PARTNER#x', sk: 'CLIENT#y', gsi1pk: `CLIENTS#${suite.partner.partnerId}`, gsi1sk: '€'.repeat(400) })).toString('base64url');

    for (const bad of [altered, handMade, 'ü€𝄞'.repeat(50), 'A'.repeat(2049)]) {
      expectCursorRefused(await suite.api.read(suite.partner, `/clients?limit=1&cursor=${encodeURIComponent(bad)}`));
    }
  });
});

describe('list cursors are encrypted', () => {
  /** The table's attribute names as a JSON payload would spell them; `pk`/`sk` quoted, since two random bytes match often. */
  const ATTRIBUTE_NAMES = ['"pk"', '"sk"', 'gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk', 'gsi3pk', 'gsi3sk'];
  const hashOf = (apiKey: string) => createHash('sha256').update(apiKey, 'utf8').digest('hex');
  /** The cursor's bytes (its base64url decoded), one character a byte, to search for text. */
  const bytesOf = (cursor: string) => Buffer.from(cursor, 'base64url').toString('latin1');

  const adminCursorOf = async (path: string) => {
    const response = await suite.api.admin('GET', path);
    expect(response.status).toBe(200);
    expect(typeof response.body.next_cursor).toBe('string');
    return response.body.next_cursor as string;
  };
  const issueKey = async (path: string) => {
    const issued = await suite.api.admin('POST', path, { scope: path === '/admin/api-keys' ? 'platform' : 'partner' });
    expect(issued.status).toBe(201);
    return issued.body.api_key as string;
  };

  it('show neither an API key`s hash nor any key structure or attribute name of the table', async () => {
    // Arrange: a second key of the suite's partner (so its key list has a next page); two platform keys
    const partnerKeys = [suite.partner.apiKey, await issueKey(`/admin/partners/${suite.partner.partnerId}/api-keys`)];
    const platformKeys = [await issueKey('/admin/api-keys'), await issueKey('/admin/api-keys')];

    // Act
    const keyCursors = [
      await adminCursorOf(`/admin/partners/${suite.partner.partnerId}/api-keys?limit=1`),
      await adminCursorOf('/admin/api-keys?limit=1'),
    ];
    const otherCursors = [
      decodeURIComponent(await nextCursorOf(suite.partner, '/clients?limit=1')),
      decodeURIComponent(await nextCursorOf(suite.partner, '/transactions?limit=1')),
    ];

    // Assert
    for (const cursor of [...keyCursors, ...otherCursors]) {
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      const bytes = bytesOf(cursor);
      for (const hidden of [...[...partnerKeys, ...platformKeys].map(hashOf), 'APIKEY', 'PARTNER', 'CLIENT', suite.partner.partnerId, ...ATTRIBUTE_NAMES]) {
        expect(bytes).not.toContain(hidden);
      }
      expect(bytes).not.toMatch(/[0-9a-f]{64}/i);
      expect(cursor.length).toBeLessThan(400);
    }
  });

  it('differ for the same position (a fresh IV each), and each continues the list', async () => {
    const [first, second] = [await nextCursorOf(suite.partner, '/clients?limit=1'), await nextCursorOf(suite.partner, '/clients?limit=1')];

    const pages = [await suite.api.read(suite.partner, `/clients?limit=1&cursor=${first}`), await suite.api.read(suite.partner, `/clients?limit=1&cursor=${second}`)];

    expect(first).not.toBe(second);
    expect(pages.map((page) => page.status)).toEqual([200, 200]);
    expect(pages[0]?.body.items).toHaveLength(1);
    expect(pages[1]?.body.items).toEqual(pages[0]?.body.items);
  });

  it('refuse a cursor with any one byte flipped, or truncated', async () => {
    // Arrange: a cursor of the partner's key list and its bytes
    await issueKey(`/admin/partners/${suite.partner.partnerId}/api-keys`);
    const path = `/admin/partners/${suite.partner.partnerId}/api-keys?limit=1`;
    const cursor = await adminCursorOf(path);
    const bytes = Buffer.from(cursor, 'base64url');
    const flipped = Array.from(bytes, (_, i) => {
      const altered = Buffer.from(bytes);
      altered[i] = (altered[i] ?? 0) ^ 0x01;
      return altered.toString('base64url');
    });
    const truncated = [
      bytes.subarray(0, -1).toString('base64url'), // the tag's last byte gone
      bytes.subarray(1).toString('base64url'), // the IV's first byte gone
      bytes.subarray(0, 28).toString('base64url'), // IV and tag's length, nothing encrypted
      bytes.subarray(0, 12).toString('base64url'), // the IV alone
      cursor.slice(0, -1), // one character gone
    ];

    // Act
    const answers = [];
    for (const bad of [...flipped, ...truncated]) answers.push(await suite.api.admin('GET', `${path}&cursor=${encodeURIComponent(bad)}`));

    // Assert
    expect(flipped).toHaveLength(bytes.length);
    for (const answer of answers) expectCursorRefused(answer);
    expect((await suite.api.admin('GET', `${path}&cursor=${encodeURIComponent(cursor)}`)).status).toBe(200);
  });

  it('refuse a cursor moved to another query or partner', async () => {
    // Arrange: key-list cursors of two partners, a clients cursor
    const other = await suite.api.createPartner();
    await issueKey(`/admin/partners/${other.partnerId}/api-keys`);
    await issueKey(`/admin/partners/${suite.partner.partnerId}/api-keys`);
    const ownKeys = await adminCursorOf(`/admin/partners/${suite.partner.partnerId}/api-keys?limit=1`);
    const otherKeys = await adminCursorOf(`/admin/partners/${other.partnerId}/api-keys?limit=1`);
    const clients = await nextCursorOf(suite.partner, '/clients?limit=1');

    // Act
    const moved = [
      await suite.api.admin('GET', `/admin/partners/${suite.partner.partnerId}/api-keys?limit=1&cursor=${encodeURIComponent(otherKeys)}`),
      await suite.api.admin('GET', `/admin/partners/${other.partnerId}/api-keys?limit=1&cursor=${encodeURIComponent(ownKeys)}`),
      await suite.api.admin('GET', `/admin/api-keys?limit=1&cursor=${encodeURIComponent(ownKeys)}`),
      await suite.api.read(suite.partner, `/transactions?limit=1&cursor=${clients}`),
      await suite.api.read(suite.partner, `/clients?limit=2&status=active&cursor=${clients}`),
    ];

    // Assert
    for (const answer of moved) expectCursorRefused(answer);
  });
});
