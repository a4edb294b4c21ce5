/**
 * The DynamoDB calls each payment request makes, counted by the local runtime per invocation (an SDK middleware
 * on the service's own client: `x-local-dynamodb-calls`), against the integration run's DynamoDB Local and the
 * sandbox processor. A checkout makes 4: the API key with the payee it names (one BatchGetItem), the rate window,
 * the idempotency claim, and the transaction written with its idempotent answer (one TransactWriteItems).
 */
import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { DYNAMODB_CALLS_HEADER } from '../../../infra/local/runtime/http-api';
import { usePartnerSuite } from '../../support/api';

const suite = usePartnerSuite();

const callsOf = (response: { headers: Headers }) => Number(response.headers.get(DYNAMODB_CALLS_HEADER));

const payment = () => ({
  partner_id: suite.partner.partnerId,
  client_id: suite.clientId,
  amount: 10,
  currency: 'EUR',
  email: 'buyer@example.com',
  partner_reference: `order-${randomUUID()}`,
});

describe('DynamoDB calls per payment request', () => {
  it.each(['/transactions/checkout-intent', '/transactions/checkout-intent-v2'])('%s makes 4 with a partner key, and its replay 3', async (path) => {
    const body = payment();
    const idempotencyKey = randomUUID();

    const created = await suite.api.signed(suite.partner, path, body, { idempotencyKey });
    const replayed = await suite.api.signed(suite.partner, path, body, { idempotencyKey });

    expect(created.status).toBe(201);
    expect(callsOf(created)).toBe(4);
    // The key with the payee, the rate window, the claim that finds the stored answer
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(callsOf(replayed)).toBe(3);
  });

  it('makes 4 for a checkout with a platform key too (the partner the body names is read with the key)', async () => {
    const platform = await suite.api.createPlatformKey();

    const created = await suite.api.signed(platform, '/transactions/checkout-intent', payment());

    expect(created.status).toBe(201);
    expect(callsOf(created)).toBe(4);
  });

  it('makes 4 for an initialize (no processor call)', async () => {
    const { amount, currency, partner_id, client_id, partner_reference } = payment();

    const created = await suite.api.signed(suite.partner, '/transactions/initialize', { amount, currency, partner_id, client_id, partner_reference });

    expect(created.status).toBe(201);
    expect(callsOf(created)).toBe(4);
  });

  it('reads the key’s own partner separately only when the body names another (refused: 403)', async () => {
    const other = await suite.api.createPartner();

    const refused = await suite.api.signed(suite.partner, '/transactions/checkout-intent', { ...payment(), partner_id: other.partnerId });

    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('API_KEY_SCOPE_FORBIDDEN');
    // The key with the named payee, the key's own partner, the rate window, the claim, the claim released (403)
    expect(callsOf(refused)).toBe(5);
  });
});
