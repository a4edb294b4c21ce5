/**
 * Fault injection into the partner-mutation chain: a handler that fails with a 5xx, or runs out of time, must
 * release its idempotency key (decisions.md §4), so the partner's retry with the same key runs afresh.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { httpRoute } from '../../../lib/composition/http-route';
import { keysFromEnvironment } from '../../../lib/processor/keys';
import { createStripeProcessor } from '../../../lib/processor/stripe';
import { sign, usePartnerSuite } from '../../support/api';
import { httpEvent, lambdaContext } from '../../support/events';

const suite = usePartnerSuite();

/** A Lambda context whose remaining time runs out `remainingMs` from now, as the real one's does. */
function contextWithRemaining(remainingMs: number) {
  const deadline = Date.now() + remainingMs;
  return { ...lambdaContext(), getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()) };
}

/** A card processor that accepts connections and never answers. */
let silentProcessor: Server;
beforeAll(async () => {
  silentProcessor = createServer(() => undefined);
  await new Promise<void>((resolve) => silentProcessor.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  silentProcessor.closeAllConnections();
  await new Promise((resolve) => silentProcessor.close(resolve));
});

function signedEvent(body: string, idempotencyKey: string) {
  return httpEvent({
    method: 'POST',
    path: '/api/v1/test/faulty',
    body,
    headers: {
      'x-api-key': suite.partner.apiKey,
      'x-svc-hmac': sign(suite.partner.hmacSecret, body),
      'idempotency-key': idempotencyKey,
    },
  });
}

describe('idempotency under faults', () => {
  it('releases the key when the handler fails with an unexpected error, so the retry runs', async () => {
    let calls = 0;
    const faulty = httpRoute({ access: 'partner-mutation', partnerOnly: true, body: z.object({ n: z.number() }) }, async () => {
      calls++;
      if (calls === 1) throw new Error('injected: store unavailable');
      return { status: 201, body: { attempt: calls } };
    });
    const key = randomUUID();
    const body = '{"n":1}';

    const failed = await faulty(signedEvent(body, key), lambdaContext());
    const retried = await faulty(signedEvent(body, key), lambdaContext());
    const replayed = await faulty(signedEvent(body, key), lambdaContext());

    expect(failed.statusCode).toBe(500);
    expect(JSON.parse(failed.body ?? '')).toEqual({ error: 'Internal server error', code: 'INTERNAL_ERROR' });
    expect(retried.statusCode).toBe(201);
    expect(JSON.parse(retried.body ?? '')).toEqual({ attempt: 2 });
    expect(replayed.headers?.['Idempotent-Replayed']).toBe('true');
    expect(JSON.parse(replayed.body ?? '')).toEqual({ attempt: 2, idempotentReplay: true });
    expect(calls).toBe(2);
  });

  it('releases the key when the handler answers a 5xx itself', async () => {
    let calls = 0;
    const flaky = httpRoute({ access: 'partner-mutation', partnerOnly: true }, async () => {
      calls++;
      return calls === 1 ? { status: 503, body: { error: 'try later', code: 'UNAVAILABLE' } } : { status: 200, body: { ok: true } };
    });
    const key = randomUUID();

    const first = await flaky(signedEvent('{}', key), lambdaContext());
    const second = await flaky(signedEvent('{}', key), lambdaContext());

    expect(first.statusCode).toBe(503);
    expect(second.statusCode).toBe(200);
    expect(calls).toBe(2);
  });

  it('cuts off a handler that hangs seconds before the function times out and releases its key', async () => {
    let calls = 0;
    const hanging = httpRoute({ access: 'partner-mutation', partnerOnly: true }, async () => {
      calls++;
      if (calls === 1) await new Promise(() => undefined);
      return { status: 201, body: { attempt: calls } };
    });
    const key = randomUUID();

    const started = Date.now();
    const cutOff = await hanging(signedEvent('{}', key), contextWithRemaining(4_000));
    const elapsed = Date.now() - started;
    const retried = await hanging(signedEvent('{}', key), lambdaContext());

    expect(cutOff.statusCode).toBe(503);
    expect(JSON.parse(cutOff.body ?? '').code).toBe('REQUEST_TIMED_OUT');
    expect(cutOff.headers?.['Retry-After']).toBe('1');
    expect(elapsed).toBeLessThan(2_500); // the chain keeps about 2 s of the 4 s to release the key and answer
    expect(retried.statusCode).toBe(201);
  });

  it('bounds a processor call that hangs by the time the function has left, and releases the key', async () => {
    // Arrange: the first attempt calls a processor that never answers; the function has 6 s left
    const { port } = silentProcessor.address() as AddressInfo;
    const processor = createStripeProcessor({
      apiBase: `http://127.0.0.1:${port}`,
      loadKeys: keysFromEnvironment({ secretKey: 'sk_test_silent', publishableKey: undefined, webhookSecret: undefined }),
    });
    let calls = 0;
    const lookUp = httpRoute({ access: 'partner-mutation', partnerOnly: true }, async () => {
      calls++;
      if (calls === 1) await processor.retrievePaymentIntent('pi_silent000000');
      return { status: 200, body: { attempt: calls } };
    });
    const key = randomUUID();

    // Act
    const started = Date.now();
    const failed = await lookUp(signedEvent('{}', key), contextWithRemaining(6_000));
    const elapsed = Date.now() - started;
    const retried = await lookUp(signedEvent('{}', key), lambdaContext());

    // Assert: the processor's own failure answers, in time for the chain to release the key
    expect(failed.statusCode).toBe(502);
    expect(JSON.parse(failed.body ?? '').code).toBe('PROCESSOR_UNAVAILABLE');
    expect(elapsed).toBeLessThan(4_000);
    expect(retried.statusCode).toBe(200);
  }, 20_000);

  it('answers a concurrent repeat in a whole 29 s function with a Retry-After of about when the first request has finished', async () => {
    // Arrange: the first request holds the key; a payment request takes about a second
    let entered!: () => void;
    let finish!: () => void;
    const inHandler = new Promise<void>((resolve) => (entered = resolve));
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const slow = httpRoute({ access: 'partner-mutation', partnerOnly: true }, async () => {
      entered();
      await finished;
      return { status: 201, body: { ok: true } };
    });
    const key = randomUUID();
    const first = slow(signedEvent('{}', key), contextWithRemaining(29_000));
    await inHandler;

    // Act
    const repeat = await slow(signedEvent('{}', key), lambdaContext());
    finish();

    // Assert: not the lease's ~30 s (a partner would wait 30 s for a 1 s request)
    expect(repeat.statusCode).toBe(409);
    expect(JSON.parse(repeat.body ?? '').code).toBe('IDEMPOTENCY_KEY_IN_USE');
    expect(Number(repeat.headers?.['Retry-After'])).toBe(1);
    expect((await first).statusCode).toBe(201);
  });
});
