/**
 * The sandbox checkout's reverse proxy (infra/local/sandbox/checkout/reverse-proxy.ts) in front of a small upstream
 * that records every request it parses. Requests are sent as raw bytes, as an attacker sends them; the proxy reaches
 * the upstream over one keep-alive connection, where a body passed on without its framing would be read as a second
 * request (request smuggling). Each request must reach the upstream exactly once, framed as it came, or be refused;
 * ordinary bodies must pass intact; the upstream's hop-by-hop headers must stay on its own connection.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Agent, createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { backendAgent, proxyRequest } from '../../../infra/local/sandbox/checkout/reverse-proxy';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** What the upstream parsed, in order. */
const seen: Seen[] = [];
/** Headers the upstream adds to its answer to `/sandbox/hop` (Node sends no `Trailer` with a Content-Length). */
const HOP_ANSWER = {
  connection: 'x-hop, content-length',
  'x-hop': 'for the proxy only',
  'keep-alive': 'timeout=99',
  'proxy-authenticate': 'Basic realm="upstream"',
};

let upstream: Server;
let proxy: Server;
/** One connection to the upstream, so every request the proxy sends (and any it smuggles) shares it, in order. */
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

const portOf = (server: Server) => (server.address() as AddressInfo).port;

beforeAll(async () => {
  upstream = createServer((request, response) => {
    let body = '';
    request.setEncoding('latin1');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      seen.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
      const answer = JSON.stringify({ answered: request.url });
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer), ...(request.url === '/sandbox/hop' ? HOP_ANSWER : {}) }).end(answer);
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const target = { origin: `http://127.0.0.1:${portOf(upstream)}`, agent };
  proxy = createServer((request, response) => proxyRequest(request, response, target, { onUnreachable: () => response.writeHead(503).end() }));
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  agent.destroy();
  await Promise.all([proxy, upstream].map((server) => new Promise((resolve) => server.close(resolve))));
});

beforeEach(() => {
  seen.length = 0;
});

/** Whether `text` holds one whole answer: its head, then the body its head announces (none to a HEAD). */
function isWhole(text: string, toHead: boolean): boolean {
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) return false;
  const head = text.slice(0, end);
  const body = text.slice(end + 4);
  if (toHead) return true;
  const length = /\r\ncontent-length: *(\d+)/i.exec(head);
  if (length !== null) return body.length >= Number(length[1]);
  return /\r\ntransfer-encoding: *chunked/i.test(head) ? body.endsWith('0\r\n\r\n') : false;
}

/** Sends `raw` on a connection of its own; resolves with the proxy's answer once whole (or the connection closed). */
function exchange(raw: string, options: { toHead?: boolean } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    let received = '';
    const socket = connect(portOf(proxy), '127.0.0.1', () => socket.write(raw, 'latin1'));
    const done = () => {
      socket.destroy();
      resolve(received);
    };
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      received += chunk;
      if (isWhole(received, options.toHead === true)) done();
    });
    socket.once('end', done);
    socket.once('error', reject);
  });
}

/**
 * Everything the upstream parsed once the proxy is idle: a last, ordinary request goes the same way (the one
 * upstream connection), so when it has been answered, anything sent before it has been parsed.
 */
async function parsedUpstream(): Promise<Array<Pick<Seen, 'method' | 'url' | 'body'>>> {
  const answer = await exchange('GET /sandbox/last HTTP/1.1\r\nHost: shop.test\r\n\r\n');
  expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  return seen.map(({ method, url, body }) => ({ method, url, body }));
}

const chunked = (...chunks: string[]) => `${chunks.map((chunk) => `${Buffer.byteLength(chunk, 'latin1').toString(16)}\r\n${chunk}\r\n`).join('')}0\r\n\r\n`;

/** A whole request, hidden in the body of another. */
const SMUGGLED = 'GET /sandbox/SMUGGLED HTTP/1.1\r\nHost: shop.test\r\n\r\n';

describe('the sandbox reverse proxy', () => {
  it.each(['GET', 'HEAD', 'DELETE', 'OPTIONS'])('passes a chunked body of a %s on chunked: the request inside it reaches the upstream as body, not as a request', async (method) => {
    // Act
    const answer = await exchange(`${method} /sandbox/a HTTP/1.1\r\nHost: shop.test\r\nTransfer-Encoding: chunked\r\n\r\n${chunked(SMUGGLED)}`, { toHead: method === 'HEAD' });

    // Assert
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(await parsedUpstream()).toEqual([
      { method, url: '/sandbox/a', body: SMUGGLED },
      { method: 'GET', url: '/sandbox/last', body: '' },
    ]);
    expect(seen[0]?.headers['transfer-encoding']).toBe('chunked');
  });

  it('keeps the Content-Length of a GET whose Connection header names it, so its body stays its body', async () => {
    const answer = await exchange(`GET /sandbox/a HTTP/1.1\r\nHost: shop.test\r\nConnection: keep-alive, content-length\r\nContent-Length: ${SMUGGLED.length}\r\n\r\n${SMUGGLED}`);

    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(await parsedUpstream()).toEqual([
      { method: 'GET', url: '/sandbox/a', body: SMUGGLED },
      { method: 'GET', url: '/sandbox/last', body: '' },
    ]);
    expect(seen[0]?.headers['content-length']).toBe(String(SMUGGLED.length));
  });

  it.each([
    ['two different Content-Lengths', 'Content-Length: 5\r\nContent-Length: 6\r\n', 'hello!'],
    ['the same Content-Length twice', 'Content-Length: 6\r\nContent-Length: 6\r\n', 'hello!'],
    ['Content-Length and Transfer-Encoding both', `Content-Length: 6\r\nTransfer-Encoding: chunked\r\n`, chunked(SMUGGLED)],
    ['a bare CR inside a header value', 'X-Note: a\rb\r\nContent-Length: 6\r\n', 'hello!'],
    ['a LF inside a header name', 'X-No\nte: a\r\nContent-Length: 6\r\n', 'hello!'],
    ['a Content-Length that is not a number', 'Content-Length: 6, 6\r\n', 'hello!'],
  ])('refuses a request with %s (400), and nothing reaches the upstream', async (_, headers, body) => {
    const answer = await exchange(`POST /sandbox/a HTTP/1.1\r\nHost: shop.test\r\n${headers}\r\n${body}`);

    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(await parsedUpstream()).toEqual([{ method: 'GET', url: '/sandbox/last', body: '' }]);
  });

  it('refuses a transfer coding other than chunked (501), and nothing reaches the upstream', async () => {
    const answer = await exchange(`POST /sandbox/a HTTP/1.1\r\nHost: shop.test\r\nTransfer-Encoding: gzip, chunked\r\n\r\n${chunked('not gzip')}`);

    expect(answer).toMatch(/^HTTP\/1\.1 501 /);
    expect(await parsedUpstream()).toEqual([{ method: 'GET', url: '/sandbox/last', body: '' }]);
  });

  it('passes a JSON body with its Content-Length, and a chunked body chunked, both intact', async () => {
    // Arrange
    const json = JSON.stringify({ sku: 'tshirt', note: 'ü€' });
    const length = Buffer.byteLength(json);
    const asSent = Buffer.from(json).toString('latin1');

    // Act
    const sized = await exchange(`POST /sandbox/orders HTTP/1.1\r\nHost: shop.test\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n${asSent}`);
    const streamed = await exchange(`POST /sandbox/orders HTTP/1.1\r\nHost: shop.test\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunked('{"sku":', '"hoodie"', '}')}`);

    // Assert
    expect([sized, streamed]).toEqual([expect.stringMatching(/^HTTP\/1\.1 200 /), expect.stringMatching(/^HTTP\/1\.1 200 /)]);
    expect(await parsedUpstream()).toEqual([
      { method: 'POST', url: '/sandbox/orders', body: asSent },
      { method: 'POST', url: '/sandbox/orders', body: '{"sku":"hoodie"}' },
      { method: 'GET', url: '/sandbox/last', body: '' },
    ]);
    expect([seen[0]?.headers['content-length'], seen[0]?.headers['content-type'], seen[1]?.headers['transfer-encoding']]).toEqual([String(length), 'application/json', 'chunked']);
  });

  it("keeps the upstream's hop-by-hop headers, and those its Connection names, on its own connection; its Content-Length passes", async () => {
    const answer = await exchange('GET /sandbox/hop HTTP/1.1\r\nHost: shop.test\r\n\r\n');

    const [head = '', body] = answer.split('\r\n\r\n');
    const headers = head.toLowerCase().split('\r\n').slice(1);
    expect(headers).toEqual(expect.arrayContaining([`content-length: ${body?.length}`, 'content-type: application/json']));
    expect(headers.filter((line) => /^(x-hop|proxy-authenticate):/.test(line) || line === 'keep-alive: timeout=99')).toEqual([]);
    expect(JSON.parse(body ?? '')).toEqual({ answered: '/sandbox/hop' });
  });

  it('with its own agent, answers the next request after the backend refused a body early and closed its connection', async () => {
    // Arrange: a backend that answers 413 before reading a big body, and closes the connection, as the example does
    const closing = createServer((request, response) => {
      if (request.url === '/sandbox/orders') {
        response.writeHead(413, { 'content-type': 'application/json', connection: 'close' }).end('{"error":"Body too large"}', () => request.socket.destroy());
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"products":[]}');
    });
    await new Promise<void>((resolve) => closing.listen(0, '127.0.0.1', resolve));
    const target = { origin: `http://127.0.0.1:${portOf(closing)}`, agent: backendAgent() };
    const front = createServer((request, response) => proxyRequest(request, response, target, { onUnreachable: () => response.writeHead(503).end() }));
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    const big = 'x'.repeat(200_000);
    try {
      // Act
      const refused = await fetch(`http://127.0.0.1:${portOf(front)}/sandbox/orders`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: big }).then(
        (answer) => answer.status,
        () => 'cut',
      );
      const next = await fetch(`http://127.0.0.1:${portOf(front)}/sandbox/products`);

      // Assert: the refusal reaches the buyer (or its connection is cut mid-upload); the next request is answered
      expect([413, 'cut']).toContain(refused);
      expect(next.status).toBe(200);
      expect(await next.json()).toEqual({ products: [] });
    } finally {
      target.agent.destroy();
      await Promise.all([front, closing].map((server) => new Promise((resolve) => server.close(resolve))));
    }
  });
});
