import type { ServerResponse } from 'node:http';
import { describe, expect, it } from '@jest/globals';
import { toHttpApiEvent, writeLambdaResult } from '../../../infra/local/lambda/adapter';
import { toHttpResponse } from '../../../lib/http/response';

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

/** What `writeLambdaResult` sends: the status, the headers and the exact bytes of the body. */
function written(result: unknown) {
  const sent: { status?: number; headers?: Record<string, unknown>; body?: Buffer } = {};
  const response = {
    writeHead(status: number, headers: Record<string, unknown>) {
      sent.status = status;
      sent.headers = headers;
      return this;
    },
    end(body: Buffer) {
      sent.body = body;
      return this;
    },
  };
  writeLambdaResult(response as unknown as ServerResponse, result);
  return sent;
}

describe('writeLambdaResult', () => {
  it('sends a text (CSV) result byte for byte in UTF-8, its content-length in bytes', () => {
    // Arrange: what a report handler's text result becomes in the chain
    const csv = 'type,partner_reference\r\ntransaction,"café, ""x"""\r\n';
    const result = toHttpResponse({ status: 200, text: csv, contentType: 'text/csv; charset=utf-8' }, 'req-1');

    // Act
    const sent = written(result);

    // Assert
    expect(sent.status).toBe(200);
    expect(sent.body).toEqual(Buffer.from(csv, 'utf8'));
    expect(sent.body?.includes(Buffer.from([0x63, 0x61, 0x66, 0xc3, 0xa9]))).toBe(true); // "café", é as C3 A9
    expect(sent.headers).toMatchObject({ 'content-type': 'text/csv; charset=utf-8', 'x-request-id': 'req-1', 'content-length': csv.length + 1 });
  });
});
