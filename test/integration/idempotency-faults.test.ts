/**
 * Fault injection into the partner-mutation chain: a handler that fails with a 5xx must release its
 * idempotency key (decisions.md §4), so the partner's retry with the same key runs afresh.
 */
import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { httpRoute } from '../../lib/http/chain';
import { sign, usePartnerSuite } from '../support/api';
import { httpEvent, lambdaContext } from '../support/events';

const suite = usePartnerSuite();

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
});
