/**
 * Sealed list cursors over HTTP (decisions.md §9): a cursor continues only the list, partner and filters it came
 * from; anything else is 400 VALIDATION_ERROR on `cursor`, never a DynamoDB error.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { type ApiResponse, type PartnerCredentials, usePartnerSuite } from '../support/api';

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
