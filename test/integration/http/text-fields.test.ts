/**
 * Over HTTP: identifiers and names hold no invisible or look-alike characters, a partner's reference is kept
 * exactly as sent (refused, not trimmed), and `limit` is plain decimal digits.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { usePartnerSuite } from '../../support/api';

const suite = usePartnerSuite();

const newClientId = () => `merchant-${randomUUID().slice(0, 8)}`;

const createClient = (fields: Record<string, unknown>) =>
  suite.api.signed(suite.partner, '/clients', { client_id: newClientId(), legal_name: 'Merchant Ltd', ...fields });

const initialize = (partnerReference: string) =>
  suite.api.signed(suite.partner, '/transactions/initialize', {
    partner_id: suite.partner.partnerId,
    client_id: suite.clientId,
    amount: 10,
    currency: 'USD',
    partner_reference: partnerReference,
  });

const refusedOn = (field: string) => ({ status: 400, body: expect.objectContaining({ code: 'VALIDATION_ERROR', details: { fieldErrors: { [field]: expect.any(Array) }, formErrors: [] } }) });

describe('client_id', () => {
  it.each([
    ['a trailing space', ' '],
    ['a zero-width space', '\u200b'],
    ['a line separator', '\u2028'],
    ['a right-to-left override', '\u202e'],
  ])('is refused with %s, so no client looks like another', async (_what, char) => {
    const clientId = newClientId();

    const response = await createClient({ client_id: `${clientId}${char}` });

    expect(response).toMatchObject(refusedOn('client_id'));
  });
});

describe('legal_name', () => {
  it.each([
    ['NUL', 'Lé\u0000Ltd'],
    ['a bidi override', 'Acme \u202egnp.exe'],
    ['a bidi isolate', 'Acme \u2066Ltd\u2069'],
    ['a trailing space', 'Acme Ltd '],
  ])('is refused with %s', async (_what, legalName) => {
    expect(await createClient({ legal_name: legalName })).toMatchObject(refusedOn('legal_name'));
  });

  it('is stored as sent, in any script', async () => {
    const response = await createClient({ legal_name: 'مؤسسة الأمل 👩‍👩‍👧' });

    expect(response.status).toBe(201);
    expect(response.body.legal_name).toBe('مؤسسة الأمل 👩‍👩‍👧');
  });
});

describe('partner_reference', () => {
  it.each([
    ['a trailing space (it would have been trimmed: the reference changed)', 'order-1 '],
    ['a leading space', ' order-1'],
    ['NUL', 'order\u0000-1'],
    ['a bidi override', 'order-\u202e1'],
  ])('is refused with %s', async (_what, reference) => {
    expect(await initialize(reference)).toMatchObject(refusedOn('partner_reference'));
  });

  it('is kept exactly as sent', async () => {
    const reference = `order ${randomUUID().slice(0, 8)}`;

    const created = await initialize(reference);
    const read = await suite.api.read(suite.partner, `/transactions/${created.body.svc_tx_id}`);

    expect(created.status).toBe(201);
    expect(read.body.partnerReference).toBe(reference);
  });
});

describe('limit', () => {
  it.each(['0x10', '%20%205', '5%20', '1e1', '10.0', '%2B5'])('is refused when it is not plain decimal digits: limit=%s', async (limit) => {
    const response = await suite.api.read(suite.partner, `/clients?limit=${limit}`);

    expect(response).toMatchObject(refusedOn('limit'));
  });

  it('takes decimal digits', async () => {
    const response = await suite.api.read(suite.partner, '/clients?limit=16');

    expect(response.status).toBe(200);
  });
});
