import { describe, expect, it } from '@jest/globals';
import { toHttpApiEvent } from '../../infra/local/lambda-adapter';

const request = (overrides: Partial<Parameters<typeof toHttpApiEvent>[0]> = {}) => ({
  method: 'POST',
  url: new URL('http://localhost:3000/api/v1/clients?limit=2&status=active&status=suspended'),
  headers: { host: 'localhost:3000', 'content-type': 'application/json', 'x-api-key': 'k', cookie: 'a=1; b=2' },
  body: Buffer.from('{"a":1}'),
  sourceIp: '127.0.0.1',
  ...overrides,
});

describe('toHttpApiEvent', () => {
  it('builds the payload 2.0 event API Gateway sends', () => {
    const event = toHttpApiEvent(request(), 'POST /api/v1/clients', undefined);

    expect(event).toMatchObject({
      version: '2.0',
      routeKey: 'POST /api/v1/clients',
      rawPath: '/api/v1/clients',
      rawQueryString: 'limit=2&status=active&status=suspended',
      cookies: ['a=1', 'b=2'],
      headers: { 'content-type': 'application/json', 'x-api-key': 'k', host: 'localhost:3000' },
      queryStringParameters: { limit: '2', status: 'active,suspended' },
      requestContext: { http: { method: 'POST', path: '/api/v1/clients' }, stage: '$default' },
      body: '{"a":1}',
      isBase64Encoded: false,
    });
    expect(event.headers.cookie).toBeUndefined();
    expect(event.requestContext.requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('base64-encodes a body whose content type is not text, like API Gateway', () => {
    const bytes = Buffer.from([0xff, 0x00, 0x10]);
    const event = toHttpApiEvent(request({ headers: { 'content-type': 'application/octet-stream' }, body: bytes }), '$default', undefined);

    expect(event.isBase64Encoded).toBe(true);
    expect(Buffer.from(event.body ?? '', 'base64')).toEqual(bytes);
  });

  it.each([
    ['a Latin-1 byte', [0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xe9, 0x22, 0x7d]],
    ['a surrogate encoded in UTF-8', [0x22, 0xed, 0xa0, 0x80, 0x22]],
    ['an overlong encoding', [0x22, 0xc0, 0xaf, 0x22]],
  ])('passes a text body that is not valid UTF-8 (%s) base64-encoded, byte for byte, never repaired', (_what, bytes) => {
    const body = Buffer.from(bytes);

    const event = toHttpApiEvent(request({ body }), 'POST /api/v1/clients', undefined);

    expect(event.isBase64Encoded).toBe(true);
    expect(Buffer.from(event.body ?? '', 'base64')).toEqual(body);
  });

  it('passes valid UTF-8 as text, byte order mark included', () => {
    const event = toHttpApiEvent(request({ body: Buffer.from([0xef, 0xbb, 0xbf, 0x22, 0xc3, 0xa9, 0x22]) }), 'POST /api/v1/clients', undefined);

    expect(event).toMatchObject({ body: '\ufeff"é"', isBase64Encoded: false });
  });

  it('passes path parameters and omits what the request did not have', () => {
    const event = toHttpApiEvent(
      request({ method: 'GET', url: new URL('http://localhost/api/v1/transactions/svc_tx_1'), headers: {}, body: Buffer.alloc(0) }),
      'GET /api/v1/transactions/{svc_tx_id}',
      { svc_tx_id: 'svc_tx_1' },
    );

    expect(event.pathParameters).toEqual({ svc_tx_id: 'svc_tx_1' });
    expect(event.body).toBeUndefined();
    expect(event.queryStringParameters).toBeUndefined();
    expect(event.cookies).toBeUndefined();
  });
});
