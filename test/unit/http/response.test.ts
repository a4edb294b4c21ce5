import { describe, expect, it } from '@jest/globals';
import { errors } from '../../../lib/domain/errors';
import { httpRoute } from '../../../lib/composition/http-route';
import { toHttpResponse } from '../../../lib/http/response';
import type { HttpResult } from '../../../lib/http/types';
import { httpEvent, lambdaContext } from '../../support/events';

const CSV = 'type,partner_reference\r\ntransaction,"café, ""x"""\r\n';

describe('toHttpResponse', () => {
  it('serialises a JSON result as JSON, with the request id', () => {
    const response = toHttpResponse({ status: 201, body: { id: 'cli_1', name: 'café' } }, 'req-1');

    expect(response).toEqual({
      statusCode: 201,
      headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'req-1', 'x-content-type-options': 'nosniff' },
      body: '{"id":"cli_1","name":"café"}',
    });
  });

  it('answers a result without a body with an empty body and no content type', () => {
    expect(toHttpResponse({ status: 204 }, 'req-1')).toEqual({ statusCode: 204, headers: { 'x-request-id': 'req-1', 'x-content-type-options': 'nosniff' }, body: '' });
  });

  it('passes a text result through as it is, under its own content type and headers', () => {
    const response = toHttpResponse(
      { status: 200, text: CSV, contentType: 'text/csv; charset=utf-8', headers: { 'content-disposition': 'attachment; filename="settlement-stl_1.csv"' } },
      'req-1',
    );

    expect(response).toEqual({
      statusCode: 200,
      headers: {
        'content-type': 'text/csv; charset=utf-8',
        'x-request-id': 'req-1',
        'x-content-type-options': 'nosniff',
        'content-disposition': 'attachment; filename="settlement-stl_1.csv"',
      },
      body: CSV,
    });
  });

  it('passes an empty text body as empty text, still with its content type', () => {
    const response = toHttpResponse({ status: 200, text: '', contentType: 'text/plain; charset=utf-8' }, 'req-1');

    expect(response.body).toBe('');
    expect(response.headers?.['content-type']).toBe('text/plain; charset=utf-8');
  });

  it('lets a text result’s contentType, not a stray header, set the content type', () => {
    const response = toHttpResponse({ status: 200, text: 'a', contentType: 'text/csv; charset=utf-8', headers: { 'Content-Type': 'application/json' } }, 'req-1');

    expect(response.headers).toEqual({ 'content-type': 'text/csv; charset=utf-8', 'x-request-id': 'req-1', 'x-content-type-options': 'nosniff' });
  });

  it('takes a result that is JSON or text, never both, and no text without its content type (checked by tsc)', () => {
    const results: HttpResult[] = [
      // @ts-expect-error a JSON body and a text body at once
      { status: 200, body: { a: 1 }, text: 'a', contentType: 'text/plain' },
      // @ts-expect-error text without a content type
      { status: 200, text: 'a' },
    ];

    // Forced past the types (a cast), the text is what is sent.
    expect(results.map((result) => toHttpResponse(result, 'req-1').body)).toEqual(['a', 'a']);
  });
});

describe('a text result through the chain', () => {
  const report = httpRoute({ access: 'public' }, async ({ path }) => {
    if (path.endsWith('/missing')) throw errors.batchNotFound();
    return { status: 200, text: CSV, contentType: 'text/csv; charset=utf-8' };
  });

  it('reaches the caller byte for byte, not JSON-encoded', async () => {
    const response = await report(httpEvent({ method: 'GET' }), lambdaContext());

    expect(response.statusCode).toBe(200);
    expect(response.headers?.['content-type']).toBe('text/csv; charset=utf-8');
    expect(response.headers?.['x-request-id']).toBe('req-test-1');
    expect(response.body).toBe(CSV);
    expect(response.isBase64Encoded).not.toBe(true);
  });

  it('still answers an error of such a route as the spec’s JSON error body', async () => {
    const response = await report(httpEvent({ method: 'GET', path: '/api/v1/missing' }), lambdaContext());

    expect(response.statusCode).toBe(404);
    expect(response.headers?.['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(response.body ?? '')).toEqual({ error: 'Settlement batch not found', code: 'BATCH_NOT_FOUND' });
  });
});
