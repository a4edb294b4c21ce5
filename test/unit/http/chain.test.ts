import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { errors } from '../../../lib/domain/errors';
import { httpRoute } from '../../../lib/composition/http-route';
import { httpEvent, lambdaContext } from '../../support/events';

const Body = z.object({
  name: z.string().min(2),
  amount: z.number().positive(),
});

const echo = httpRoute({ access: 'public', body: Body }, async ({ body }) => ({ status: 201, body: { received: body } }));

const invoke = (handler: typeof echo, event: Parameters<typeof echo>[0]) => handler(event, lambdaContext());

const parse = (response: Awaited<ReturnType<typeof echo>>) => JSON.parse(response.body ?? '');

describe('the HTTP chain', () => {
  it('passes a valid body to the handler and serialises its result as JSON', async () => {
    const response = await invoke(echo, httpEvent({ method: 'POST', body: '{"name":"Ada","amount":12.5}' }));

    expect(response.statusCode).toBe(201);
    expect(response.headers?.['content-type']).toMatch(/^application\/json/);
    expect(response.headers?.['x-request-id']).toBe('req-test-1');
    expect(parse(response)).toEqual({ received: { name: 'Ada', amount: 12.5 } });
  });

  it('turns a malformed JSON body into 400 VALIDATION_ERROR with a form error', async () => {
    const response = await invoke(echo, httpEvent({ method: 'POST', body: '{"name": "Ada",' }));

    expect(response.statusCode).toBe(400);
    expect(parse(response)).toEqual({
      error: 'Malformed JSON body',
      code: 'VALIDATION_ERROR',
      details: { fieldErrors: {}, formErrors: ['Malformed JSON body'] },
    });
  });

  it("turns a zod failure into the spec's body: details.fieldErrors per field and details.formErrors", async () => {
    const response = await invoke(echo, httpEvent({ method: 'POST', body: '{"name":"A","amount":-1}' }));

    expect(response.statusCode).toBe(400);
    const body = parse(response);
    expect(body).toEqual({
      error: 'Request body validation failed',
      code: 'VALIDATION_ERROR',
      details: {
        fieldErrors: { name: [expect.any(String)], amount: [expect.any(String)] },
        formErrors: [],
      },
    });
  });

  it('reports a missing or non-object body as a form error', async () => {
    const empty = await invoke(echo, httpEvent({ method: 'POST' }));
    const array = await invoke(echo, httpEvent({ method: 'POST', body: '[1,2]' }));

    for (const response of [empty, array]) {
      expect(response.statusCode).toBe(400);
      const body = parse(response);
      expect(body.code).toBe('VALIDATION_ERROR');
      expect(body.details.formErrors).toHaveLength(1);
      expect(body.details.fieldErrors).toEqual({});
    }
  });

  it('decodes a base64-encoded body before parsing it', async () => {
    const body = Buffer.from('{"name":"Zoë","amount":1}', 'utf8').toString('base64');

    const response = await invoke(echo, httpEvent({ method: 'POST', body, isBase64Encoded: true }));

    expect(response.statusCode).toBe(201);
    expect(parse(response).received.name).toBe('Zoë');
  });

  it('keeps a byte order mark and every byte of a base64-encoded body: what the HMAC covers is what was sent', async () => {
    const route = httpRoute({ access: 'public' }, async ({ rawBody }) => ({ status: 200, body: { units: [...rawBody].map((c) => c.codePointAt(0)) } }));
    const body = Buffer.from([0xef, 0xbb, 0xbf, 0x41, 0xc3, 0xa9]).toString('base64'); // BOM, A, é

    const response = await invoke(route, httpEvent({ method: 'POST', body, isBase64Encoded: true }));

    expect(parse(response)).toEqual({ units: [0xfeff, 0x41, 0xe9] });
  });

  it.each([
    ['a base64 body with a Latin-1 byte', { body: Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xe9, 0x22, 0x7d]).toString('base64'), isBase64Encoded: true }],
    ['a base64 body with a surrogate encoded in UTF-8', { body: Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]).toString('base64'), isBase64Encoded: true }],
    ['a base64 body with an overlong encoding', { body: Buffer.from([0x22, 0xc0, 0xaf, 0x22]).toString('base64'), isBase64Encoded: true }],
    ['a text body holding a lone surrogate (no UTF-8 can carry it)', { body: '{"name":"A\ud800","amount":1}', isBase64Encoded: false }],
  ])('refuses %s with 400 VALIDATION_ERROR before any step reads it, even on a route that takes no body', async (_what, event) => {
    const readsRawBody = httpRoute({ access: 'public' }, async ({ rawBody }) => ({ status: 200, body: { rawBody } }));

    for (const route of [echo, readsRawBody]) {
      const response = await invoke(route, httpEvent({ method: 'POST', ...event }));

      expect(response.statusCode).toBe(400);
      expect(response.headers?.['x-request-id']).toBe('req-test-1');
      expect(parse(response)).toEqual({ error: expect.any(String), code: 'VALIDATION_ERROR', details: { fieldErrors: {}, formErrors: [expect.stringContaining('UTF-8')] } });
    }
  });

  it('validates query parameters with the same error shape', async () => {
    const list = httpRoute(
      { access: 'public', query: z.object({ limit: z.coerce.number().int().min(1).max(200).default(50) }) },
      async ({ query }) => ({ status: 200, body: query }),
    );

    const ok = await list(httpEvent({ query: { limit: '5' } }), lambdaContext());
    const defaulted = await list(httpEvent({}), lambdaContext());
    const bad = await list(httpEvent({ query: { limit: '500' } }), lambdaContext());

    expect(JSON.parse(ok.body ?? '')).toEqual({ limit: 5 });
    expect(JSON.parse(defaulted.body ?? '')).toEqual({ limit: 50 });
    expect(bad.statusCode).toBe(400);
    expect(Object.keys(JSON.parse(bad.body ?? '').details.fieldErrors)).toEqual(['limit']);
  });

  it('maps a ServiceError to its status, code and headers', async () => {
    const limited = httpRoute({ access: 'public' }, async () => {
      throw errors.rateLimited(30);
    });

    const response = await limited(httpEvent({}), lambdaContext());

    expect(response.statusCode).toBe(429);
    expect(response.headers?.['Retry-After']).toBe('30');
    expect(JSON.parse(response.body ?? '')).toEqual({ error: 'Rate limit exceeded', code: 'RATE_LIMITED' });
  });

  it('answers an unexpected error with a generic 500 that reveals nothing', async () => {
    const broken = httpRoute({ access: 'public' }, async () => {
      throw new Error('connection string postgres://user:secret@db');
    });

    const response = await broken(httpEvent({}), lambdaContext());

    expect(response.statusCode).toBe(500);
    expect(JSON.parse(response.body ?? '')).toEqual({ error: 'Internal server error', code: 'INTERNAL_ERROR' });
    expect(response.body).not.toContain('secret');
  });

  it('shows the code and fixed message of a 5xx domain error the spec names', async () => {
    const unconfigured = httpRoute({ access: 'public' }, async () => {
      throw errors.processorKeyMissing();
    });

    const response = await unconfigured(httpEvent({}), lambdaContext());

    expect(response.statusCode).toBe(500);
    expect(JSON.parse(response.body ?? '').code).toBe('PROCESSOR_KEY_MISSING');
  });

  it('does not parse the body of a route that takes none', async () => {
    const noBody = httpRoute({ access: 'public' }, async () => ({ status: 204 }));

    const response = await noBody(httpEvent({ method: 'DELETE', body: 'not json' }), lambdaContext());

    expect(response.statusCode).toBe(204);
    expect(response.body).toBe('');
  });
});
