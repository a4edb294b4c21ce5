/**
 * Processor calls within the deadline of the request they serve (lib/deadline.ts): Stripe retries a failing
 * call only while a whole further attempt still fits, so retries cannot carry a call past the function's timeout.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runWithDeadline } from '../../../lib/deadline';
import { keysFromEnvironment } from '../../../lib/processor/keys';
import { createStripeProcessor } from '../../../lib/processor/stripe';

/** A processor that fails every request at once with a retryable 500, counting them. */
let failing: Server;
let requests = 0;
beforeAll(async () => {
  failing = createServer((_request, response) => {
    requests++;
    response.writeHead(500, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ error: { type: 'api_error', message: 'injected failure' } }));
  });
  await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
});
afterAll(() => new Promise((resolve) => failing.close(resolve)));

async function attemptsWithin(msToDeadline: number): Promise<number> {
  const processor = createStripeProcessor({
    apiBase: `http://127.0.0.1:${(failing.address() as AddressInfo).port}`,
    loadKeys: keysFromEnvironment({ secretKey: 'sk_test_failing', publishableKey: undefined, webhookSecret: undefined }),
  });
  requests = 0;
  await expect(runWithDeadline(Date.now() + msToDeadline, () => processor.retrievePaymentIntent('pi_failing00000'))).rejects.toMatchObject({
    code: 'PROCESSOR_UNAVAILABLE',
  });
  return requests;
}

describe('processor calls within the request deadline', () => {
  it('retries a failing call twice when the deadline leaves room for three whole attempts', async () => {
    expect(await attemptsWithin(40_000)).toBe(3);
  });

  it('does not retry when a further whole attempt would not fit before the deadline', async () => {
    expect(await attemptsWithin(8_000)).toBe(1);
  });

  it('makes no call once the deadline has passed', async () => {
    expect(await attemptsWithin(500)).toBe(0);
  });
});
