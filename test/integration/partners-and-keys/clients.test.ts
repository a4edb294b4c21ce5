import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { usePartnerSuite } from '../../support/api';

const suite = usePartnerSuite({ partner: { service_fee_percentage: 1.5 } });

const clientId = () => `merchant-${randomUUID().slice(0, 8)}`;

describe('POST /clients', () => {
  it('registers a merchant under the key partner and answers the Client resource, with defaults', async () => {
    const id = clientId();

    const response = await suite.api.signed(suite.partner, '/clients', { client_id: id, legal_name: 'Merchant Ltd' });

    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.stringMatching(/^cli_[0-9a-z]{24}$/),
      partner_id: suite.partner.partnerId,
      client_id: id,
      legal_name: 'Merchant Ltd',
      status: 'active',
      partner_fee_percentage: null,
      partner_fee_flat_usd: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: expect.any(String),
    });
  });

  it('keeps the given status and fees', async () => {
    const response = await suite.api.signed(suite.partner, '/clients', {
      client_id: clientId(),
      legal_name: 'KYC Pending Ltd',
      status: 'pending_kyc',
      partner_fee_percentage: 1.5,
      partner_fee_flat_usd: 0.3,
    });

    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ status: 'pending_kyc', partner_fee_percentage: 1.5, partner_fee_flat_usd: 0.3 });
  });

  it('keeps partner_fee_flat_usd in whole cents, converted exactly (0.29 USD is 29 cents, not 28.999…), and answers it in dollars', async () => {
    const { getClient } = await import('../../../lib/store/clients');
    const id = clientId();

    const response = await suite.api.signed(suite.partner, '/clients', { client_id: id, legal_name: 'Flat Ltd', partner_fee_flat_usd: 0.29 });
    const stored = await getClient(suite.partner.partnerId, id);

    expect(response.body.partner_fee_flat_usd).toBe(0.29);
    expect(stored).toMatchObject({ partnerFeeFlatUsdCents: 29 });
    expect(stored).not.toHaveProperty('partnerFeeFlatUsd');
  });

  it('reads a client stored before the fee was kept in cents (partnerFeeFlatUsd in dollars) as cents', async () => {
    // Arrange: an item as the service wrote it before (dollars, as a float)
    const { PutCommand } = await import('@aws-sdk/lib-dynamodb');
    const { documentClient, tableName } = await import('../../../lib/store/dynamo');
    const { keys } = await import('../../../lib/store/keys');
    const { getClient } = await import('../../../lib/store/clients');
    const id = clientId();
    const now = new Date().toISOString();
    await documentClient.send(
      new PutCommand({
        TableName: tableName,
        Item: {
          ...keys.client(suite.partner.partnerId, id),
          ...keys.clientIndex(suite.partner.partnerId, id, now),
          entity: 'client',
          id: 'cli_legacy',
          partnerId: suite.partner.partnerId,
          clientId: id,
          legalName: 'Old Ltd',
          status: 'active',
          partnerFeePercentage: null,
          partnerFeeFlatUsd: 0.29,
          createdAt: now,
          updatedAt: now,
        },
      }),
    );

    // Act
    const stored = await getClient(suite.partner.partnerId, id);

    // Assert
    expect(stored).toMatchObject({ partnerFeeFlatUsdCents: 29 });
  });

  it('refuses a partner fee below the service fee with 400 CLIENT_FEE_BELOW_SVC_FEE', async () => {
    const response = await suite.api.signed(suite.partner, '/clients', { client_id: clientId(), legal_name: 'Cheap Ltd', partner_fee_percentage: 1.49 });

    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: expect.stringContaining('1.5'), code: 'CLIENT_FEE_BELOW_SVC_FEE' });
  });

  it.each([
    [{ client_id: 'ab', legal_name: 'Short Id Ltd' }, 'client_id'],
    [{ client_id: 'merchant#1', legal_name: 'Hash Ltd' }, 'client_id'],
    [{ client_id: 'merchant-ok', legal_name: 'A' }, 'legal_name'],
    [{ client_id: 'merchant-ok', legal_name: 'Flat Ltd', partner_fee_flat_usd: 10.01 }, 'partner_fee_flat_usd'],
    [{ client_id: 'merchant-ok', legal_name: 'Flat Ltd', partner_fee_flat_usd: -1 }, 'partner_fee_flat_usd'],
    [{ client_id: 'merchant-ok', legal_name: 'Flat Ltd', partner_fee_flat_usd: 1.234 }, 'partner_fee_flat_usd'],
    [{ client_id: 'merchant-ok', legal_name: 'Status Ltd', status: 'closed' }, 'status'],
    [{ client_id: 'merchant-ok', legal_name: 'Pct Ltd', partner_fee_percentage: 101 }, 'partner_fee_percentage'],
    [{ legal_name: 'No Id Ltd' }, 'client_id'],
    [{ client_id: 'merchant-ok', legal_name: 'Lone \ud800 Surrogate Ltd' }, 'legal_name'],
  ])('refuses %j with 400 VALIDATION_ERROR on %s', async (body, field) => {
    const response = await suite.api.signed(suite.partner, '/clients', body);

    expect(response.status).toBe(400);
    expect(response.body.code).toBe('VALIDATION_ERROR');
    expect(Object.keys(response.body.details.fieldErrors)).toEqual([field]);
    expect(response.body.details.formErrors).toEqual([]);
  });

  it('answers 409 CLIENT_EXISTS for a client_id the partner already has; another partner may use it', async () => {
    const id = clientId();
    const other = await suite.api.createPartner();

    const first = await suite.api.signed(suite.partner, '/clients', { client_id: id, legal_name: 'First Ltd' });
    const second = await suite.api.signed(suite.partner, '/clients', { client_id: id, legal_name: 'Second Ltd' });
    const otherPartner = await suite.api.signed(other, '/clients', { client_id: id, legal_name: 'Other Ltd' });

    expect(first.status).toBe(201);
    expect(second.status).toBe(409);
    expect(second.body.code).toBe('CLIENT_EXISTS');
    expect(otherPartner.status).toBe(201);
  });
});

describe('GET /clients', () => {
  it('lists newest first, pages with limit/cursor visiting each client exactly once, filters by status', async () => {
    // Arrange: a partner of its own with five clients, two suspended
    const own = await suite.api.createPartner();
    const created: string[] = [];
    for (let i = 0; i < 5; i++) {
      const response = await suite.api.signed(own, '/clients', {
        client_id: `m-${i}-${randomUUID().slice(0, 6)}`,
        legal_name: `Merchant ${i}`,
        status: i % 2 === 1 ? 'suspended' : 'active',
      });
      created.push(response.body.client_id);
    }

    // Act: walk every page of two
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: { status: number; body: { items: Array<{ client_id: string }>; next_cursor: string | null } } = await suite.api.read(
        own,
        `/clients?limit=2${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
      );
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.items.map((client) => client.client_id));
      cursor = page.body.next_cursor;
      pages++;
    } while (cursor !== null);
    const suspended = await suite.api.read(own, '/clients?status=suspended&limit=1');
    const suspendedRest = await suite.api.read(own, `/clients?status=suspended&limit=1&cursor=${encodeURIComponent(suspended.body.next_cursor)}`);

    // Assert
    expect(seen).toEqual([...created].reverse());
    expect(pages).toBe(3);
    expect(suspended.body.items.map((client: { client_id: string }) => client.client_id)).toEqual([created[3]]);
    expect(suspendedRest.body.items.map((client: { client_id: string }) => client.client_id)).toEqual([created[1]]);
    expect(suspendedRest.body.next_cursor).toBeNull();
  });

  it('never shows another partner its clients, even with that partner cursor', async () => {
    const a = await suite.api.createPartner();
    const b = await suite.api.createPartner();
    await suite.api.signed(a, '/clients', { client_id: clientId(), legal_name: 'A One' });
    await suite.api.signed(a, '/clients', { client_id: clientId(), legal_name: 'A Two' });
    const aPage = await suite.api.read(a, '/clients?limit=1');

    const bList = await suite.api.read(b, '/clients');
    const bWithACursor = await suite.api.read(b, `/clients?cursor=${encodeURIComponent(aPage.body.next_cursor)}`);

    expect(bList.body).toEqual({ items: [], next_cursor: null });
    expect(bWithACursor.status).toBe(400);
    expect(bWithACursor.body.details.fieldErrors.cursor).toBeDefined();
  });

  it('refuses a bad limit, status or cursor with 400 VALIDATION_ERROR', async () => {
    for (const query of ['limit=0', 'limit=201', 'limit=abc', 'status=closed', 'cursor=not-a-cursor']) {
      const response = await suite.api.read(suite.partner, `/clients?${query}`);
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('VALIDATION_ERROR');
    }
  });
});
