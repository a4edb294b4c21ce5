/** 500 PROCESSOR_KEY_MISSING / PROCESSOR_PUBLISHABLE_MISSING when the service has no processor keys. */
import { describe, expect, it } from '@jest/globals';

// Configuration is read once when the modules load: blank the keys first (empty = not configured).
process.env.PROCESSOR_SECRET_KEY = '';
process.env.PROCESSOR_PUBLISHABLE_KEY = '';
const { usePartnerSuite } = await import('../../support/api');

const suite = usePartnerSuite();

const body = () => ({
  partner_id: suite.partner.partnerId,
  client_id: suite.clientId,
  amount: 10,
  currency: 'USD',
  email: 'buyer@example.com',
  partner_reference: 'order-1',
});

describe('a service without processor keys', () => {
  it('answers checkout-intent with 500 PROCESSOR_PUBLISHABLE_MISSING, and the legacy initialize still works', async () => {
    const checkout = await suite.api.signed(suite.partner, '/transactions/checkout-intent', body());
    const { email: _email, ...initializeBody } = body();
    const initialize = await suite.api.signed(suite.partner, '/transactions/initialize', initializeBody);

    expect(checkout.status).toBe(500);
    expect(checkout.body).toEqual({ error: expect.stringContaining('publishable'), code: 'PROCESSOR_PUBLISHABLE_MISSING' });
    expect(initialize.status).toBe(201);
  });

  it('answers 500 PROCESSOR_KEY_MISSING once a publishable key is there but the secret key is not', async () => {
    const { createHandler } = await import('../../../functions/transactions-checkout-intent');
    const { createStripeProcessor } = await import('../../../lib/processor/stripe');
    const { transactionDeps } = await import('../../../lib/composition');
    const { sign } = await import('../../support/api');
    const { httpEvent, lambdaContext } = await import('../../support/events');
    const handler = createHandler({
      ...transactionDeps,
      processor: createStripeProcessor({
        apiBase: undefined,
        loadKeys: async () => ({ secretKey: undefined, publishableKey: 'pk_test_x', webhookSecret: undefined }),
      }),
    });
    const payload = JSON.stringify(body());

    const response = await handler(
      httpEvent({
        method: 'POST',
        path: '/api/v1/transactions/checkout-intent',
        body: payload,
        headers: { 'x-api-key': suite.partner.apiKey, 'x-svc-hmac': sign(suite.partner.hmacSecret, payload), 'idempotency-key': 'no-secret-key' },
      }),
      lambdaContext(),
    );

    expect(response.statusCode).toBe(500);
    expect(JSON.parse(response.body ?? '')).toEqual({ error: expect.stringContaining('secret key'), code: 'PROCESSOR_KEY_MISSING' });
  });
});
