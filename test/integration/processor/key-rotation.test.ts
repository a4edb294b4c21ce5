/**
 * Processor keys are read again after a while (lib/processor/keys.ts); the Stripe client must follow, so a
 * rotated secret key takes effect in a warm container without a cold start.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ProcessorKeys } from '../../../lib/processor/keys';
import { createStripeProcessor } from '../../../lib/processor/stripe';

/** A processor that knows no intent and records the key each request was made with. */
let processorApi: Server;
const keysUsed: string[] = [];
beforeAll(async () => {
  processorApi = createServer((request, response) => {
    keysUsed.push(request.headers.authorization ?? '');
    response.writeHead(404, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ error: { type: 'invalid_request_error', code: 'resource_missing', message: 'No such payment_intent' } }));
  });
  await new Promise<void>((resolve) => processorApi.listen(0, '127.0.0.1', resolve));
});
afterAll(() => new Promise((resolve) => processorApi.close(resolve)));

describe('the Stripe client and rotated keys', () => {
  it('calls the processor with the secret key the keys give now, not the one it first saw', async () => {
    let current: ProcessorKeys = { secretKey: 'sk_test_before', publishableKey: undefined, webhookSecret: undefined };
    const processor = createStripeProcessor({ apiBase: `http://127.0.0.1:${(processorApi.address() as AddressInfo).port}`, loadKeys: async () => current });

    await processor.retrievePaymentIntent('pi_unknown000000');
    current = { ...current, secretKey: 'sk_test_after' };
    await processor.retrievePaymentIntent('pi_unknown000000');

    expect(keysUsed).toEqual(['Bearer sk_test_before', 'Bearer sk_test_after']);
  });
});
