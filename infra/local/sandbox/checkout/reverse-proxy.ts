/**
 * A request on the service's port passed on to a backend of its own process, as a reverse proxy does: the same
 * method, path and headers, the body streamed both ways (never buffered), the answer's status and headers as the
 * backend gave them. Only the hop-by-hop headers (RFC 9110 §7.6.1) stay on their own connection.
 */
import { type Agent, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, request as httpRequest, type ServerResponse } from 'node:http';
import { pipeline } from 'node:stream';

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/** The end-to-end headers of `headers`: the hop-by-hop ones, and any the `connection` header names, left out. */
function endToEnd(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const named = new Set(
    String(headers.connection ?? '')
      .split(',')
      .map((name) => name.trim().toLowerCase()),
  );
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name) && !named.has(name)));
}

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
  const { hostname, port } = new URL(target.origin);
  // A body's length travels in `content-length`; a chunked one (no length) is sent chunked again by node.
  const upstream = httpRequest({ host: hostname, port, method: request.method, path: request.url, headers: endToEnd(request.headers), agent: target.agent }, (answer) => {
    const status = answer.statusCode ?? 502;
    hooks.onAnswer?.(status);
    response.writeHead(status, answer.statusMessage, endToEnd(answer.headers));
    pipeline(answer, response, () => undefined);
  });
  upstream.once('error', (error) => {
    if (response.headersSent) response.destroy(error);
    else hooks.onUnreachable(error);
  });
  // The buyer gone before the answer ended: the backend's request is cut too.
  response.once('close', () => {
    if (!response.writableFinished) upstream.destroy();
  });
  pipeline(request, upstream, () => undefined);
}
