/**
 * A request on the service's port passed on to a backend of its own process, as a reverse proxy does: the same
 * method, path and headers, the body streamed both ways (never buffered), the answer's status and headers as the
 * backend gave them. Only the hop-by-hop headers (RFC 9110 §7.6.1) stay on their own connection.
 *
 * The backend is reached over keep-alive connections shared by every buyer, so a body must reach it framed exactly
 * as Node framed it on the way in, whatever the method: bytes sent upstream without a length or chunking would be
 * read by the backend as a request of their own (request smuggling). A body therefore goes on with the length it
 * came with, or chunked when it came chunked, on a GET, HEAD, DELETE or OPTIONS too, as nginx and Envoy pass such a
 * body on; a request without a body sends none. Node's server already refuses (400) a request whose framing is in
 * doubt: a Content-Length given twice or not a number, both Transfer-Encoding and Content-Length, CR or LF inside a
 * header. What it lets through and this proxy cannot frame faithfully, a transfer coding other than `chunked`, is
 * refused with 501 (RFC 9112 §6.1), as nginx and Envoy refuse it.
 */
import { Agent, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, request as httpRequest, type ServerResponse } from 'node:http';
import { pipeline } from 'node:stream';

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/**
 * Headers that `Connection` may not remove: the message's framing and its host. A request naming `content-length`
 * in `Connection` would otherwise have its body forwarded with no length at all.
 */
const NOT_NAMEABLE = new Set(['content-length', 'host', 'transfer-encoding']);

/** The end-to-end headers of `headers`: the hop-by-hop ones, and any other the `connection` header names, left out. */
function endToEnd(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const named = new Set(
    String(headers.connection ?? '')
      .split(',')
      .map((name) => name.trim().toLowerCase())
      .filter((name) => !NOT_NAMEABLE.has(name)),
  );
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name) && !named.has(name)));
}

/**
 * How the request's body goes upstream: with the `content-length` it came with, chunked as it came, or none at all.
 * A transfer coding other than a lone `chunked` (`gzip, chunked`) is not framed here: `undefined`.
 */
function framingOf(request: IncomingMessage): OutgoingHttpHeaders | 'no-body' | undefined {
  const transferEncoding = request.headers['transfer-encoding'];
  if (transferEncoding !== undefined) return transferEncoding.trim().toLowerCase() === 'chunked' ? { 'transfer-encoding': 'chunked' } : undefined;
  const contentLength = request.headers['content-length'];
  return contentLength === undefined ? 'no-body' : { 'content-length': contentLength };
}

/**
 * The proxy's connections to the backend: one per request, never kept alive. A backend that answers early and closes
 * (a 413 before it read the body) would otherwise leave a dead socket in the pool for the next buyer's request, and a
 * shared connection is where a framing mistake becomes someone else's answer; the sandbox's traffic is a few requests
 * a second at most, so a fresh loopback connection each costs nothing that matters.
 */
export const backendAgent = () => new Agent({ keepAlive: false });

export interface ProxyTarget {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  agent: Agent;
}

/**
 * Passes `request` on to `target` and its answer back. `onAnswer` sees the backend's status before the body
 * streams; `onUnreachable` answers when the backend cannot be reached (it died, or is stopping) before any
 * answer began; after that, a failure cuts the response, as the backend's own connection would have been cut.
 */
export function proxyRequest(
  request: IncomingMessage,
  response: ServerResponse,
  target: ProxyTarget,
  hooks: { onAnswer?: (status: number) => void; onUnreachable: (error: Error) => void },
): void {
  // Node's parser refuses both together (400) before this runs; checked again so that a lenient parser
  // (`--insecure-http-parser`) cannot have this proxy pick one of the two framings (RFC 9112 §6.3).
  if (request.headers['transfer-encoding'] !== undefined && request.headers['content-length'] !== undefined) {
    refuse(response, 400, 'BAD_REQUEST', 'A request may not have both Transfer-Encoding and Content-Length');
    return;
  }
  const framing = framingOf(request);
  if (framing === undefined) {
    refuse(response, 501, 'NOT_IMPLEMENTED', 'The only transfer coding accepted is chunked');
    return;
  }
  const { hostname, port } = new URL(target.origin);
  let upstream: ClientRequest;
  try {
    upstream = httpRequest({ host: hostname, port, method: request.method, path: request.url, headers: { ...endToEnd(request.headers), ...(framing === 'no-body' ? {} : framing) }, agent: target.agent }, (answer) => {
      const status = answer.statusCode ?? 502;
      hooks.onAnswer?.(status);
      try {
        response.writeHead(status, answer.statusMessage, endToEnd(answer.headers));
      } catch (error) {
        // A header Node will not send on. Its client's parser refuses such an answer first (on Node 22); were it not
        // to, this is a 502, not an exception thrown out of the proxy.
        answer.destroy();
        console.error('[sandbox-checkout] the backend answered with headers that cannot be passed on', error);
        refuse(response, 502, 'BAD_GATEWAY', 'The sandbox checkout backend answered with headers that cannot be passed on');
        return;
      }
      pipeline(answer, response, () => undefined);
    });
  } catch {
    // A header or target Node's server accepted and its client will not send (ERR_INVALID_CHAR). On Node 22 the server
    // refuses every such byte first; were it not to, this is a 400, not a rejection that ends the runtime.
    refuse(response, 400, 'BAD_REQUEST', 'The request has a header that cannot be passed on');
    return;
  }
  upstream.once('error', (error) => {
    if (response.headersSent) response.destroy(error);
    else hooks.onUnreachable(error);
  });
  // The buyer gone before the answer ended: the backend's request is cut too.
  response.once('close', () => {
    if (!response.writableFinished) upstream.destroy();
  });
  if (framing === 'no-body') {
    // Nothing may follow the headers: a GET's body bytes, written unframed, would be the next request upstream.
    request.resume();
    upstream.end();
  } else {
    pipeline(request, upstream, () => undefined);
  }
}

/**
 * Answers a request the proxy will not pass on, and closes the buyer's connection: what is left of its body (its
 * framing in doubt) must not be read as a next request.
 */
function refuse(response: ServerResponse, status: number, code: string, message: string): void {
  if (response.headersSent || response.destroyed) return;
  response.writeHead(status, { 'content-type': 'application/json', 'x-content-type-options': 'nosniff', connection: 'close' }).end(JSON.stringify({ error: message, code }));
}
