import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect } from 'node:net';
import { DescribeTableCommand, DescribeTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { startHttpApi, type HttpApi } from '../../../infra/local/runtime/http-api';
import { dynamoClient, tableName } from '../../../lib/store/dynamo';
import { ensureTable, GLOBAL_INDEXES } from '../../../lib/store/table';

describe('the local HTTP API', () => {
  let api: HttpApi;
  beforeAll(async () => {
    api = await startHttpApi({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await api.close();
  });

  it('answers GET /api/v1/health with 200, status ok and each dependency checked', async () => {
    const response = await fetch(`${api.url}/api/v1/health`);

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(await response.json()).toEqual({ status: 'ok', checks: { dynamodb: 'ok', processor: 'ok' } });
  });

  it('answers HEAD on a GET route like GET (status, headers, content-length) with no body', async () => {
    const get = await fetch(`${api.url}/api/v1/health`);
    const getBody = Buffer.from(await get.arrayBuffer());

    const head = await rawRequest(api.port, 'HEAD /api/v1/health');

    expect(head.statusLine).toBe('HTTP/1.1 200 OK');
    expect(head.headers['content-type']).toBe(get.headers.get('content-type'));
    expect(head.headers['content-length']).toBe(String(getBody.length));
    expect(head.body).toBe('');
  });

  it('answers HEAD on a read that needs an API key like GET does: 401, no body', async () => {
    const head = await rawRequest(api.port, 'HEAD /api/v1/transactions');

    expect(head.statusLine).toBe('HTTP/1.1 401 Unauthorized');
    expect(head.body).toBe('');
  });

  it('answers an unknown route with 404 NOT_FOUND JSON', async () => {
    const response = await fetch(`${api.url}/api/v1/no/such/route`, { method: 'POST', body: '{not json' });

    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: 'No route matches this path', code: 'NOT_FOUND' });
  });

  it('answers a path outside /api/v1 with 404 too', async () => {
    const response = await fetch(`${api.url}/health`);

    expect(response.status).toBe(404);
    expect(((await response.json()) as { code: string }).code).toBe('NOT_FOUND');
  });

  it('answers a known path under another method with 405 METHOD_NOT_ALLOWED', async () => {
    const response = await fetch(`${api.url}/api/v1/health`, { method: 'DELETE' });

    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD');
    expect(((await response.json()) as { code: string }).code).toBe('METHOD_NOT_ALLOWED');
  });

  it.each([
    ['an unknown method', 'FOO /api/v1/health', 'HTTP/1.1 400 Bad Request', 'BAD_REQUEST', ''],
    ['headers over the size limit', 'GET /api/v1/clients', 'HTTP/1.1 431 Request Header Fields Too Large', 'HEADERS_TOO_LARGE', `x-api-key: ${'x'.repeat(60_000)}\r\n`],
  ])('answers a request Node cannot parse (%s) in the spec error body', async (_name, requestLine, statusLine, code, extraHeaders) => {
    const answer = await rawRequest(api.port, requestLine, extraHeaders);

    expect(answer.statusLine).toBe(statusLine);
    expect(JSON.parse(answer.body)).toEqual({ error: expect.any(String), code });
  });
});

/**
 * One request over a raw socket, read to the end: what the server really sent, since an HTTP client drops
 * whatever follows a HEAD response's headers.
 */
function rawRequest(port: number, requestLine: string, extraHeaders = ''): Promise<{ statusLine: string; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`${requestLine} HTTP/1.1\r\nHost: localhost\r\n${extraHeaders}Connection: close\r\n\r\n`));
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('end', () => {
      const [head = '', ...rest] = received.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      resolve({ statusLine, headers, body: rest.join('\r\n\r\n') });
    });
  });
}

describe('the table in DynamoDB Local', () => {
  it('has every index of the single-table design and TTL on expiresAt', async () => {
    const { Table } = await dynamoClient.send(new DescribeTableCommand({ TableName: tableName }));
    const ttl = await dynamoClient.send(new DescribeTimeToLiveCommand({ TableName: tableName }));

    expect(Table?.KeySchema).toEqual([
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ]);
    expect(Table?.GlobalSecondaryIndexes?.map((index) => index.IndexName).sort()).toEqual(
      GLOBAL_INDEXES.map((index) => index.indexName).sort(),
    );
    expect(ttl.TimeToLiveDescription?.AttributeName).toBe('expiresAt');
  });

  it('is created only once: ensureTable on an existing table changes nothing', async () => {
    expect(await ensureTable(dynamoClient, tableName)).toBe('existed');
  });
});
