/**
 * The local stand-in for API Gateway's HTTP API: serves every route of `lib/routes.ts` by building the same
 * payload-2.0 event AWS would send and invoking the same `functions/<name>.ts` handler in this process.
 * Paths no route serves go to the `$default` function, as in AWS. A HEAD request runs its route's function like
 * the GET (see `lib/routes.ts`); Node's server then sends the status and headers, `content-length` included,
 * and drops the body, as HTTP requires of any server.
 */
import { createServer, type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { FUNCTION_TIMEOUT_SECONDS, fallbackRoute, resolveRoute, routeKey } from '../../../lib/routes';
import { type InvocationUsage, invokeFunction, toHttpApiEvent, writeLambdaResult } from '../lambda/adapter';
import { consoleAsset } from './console-assets';
import { closeGracefully, listen, readBody } from '../http-server';
import { loadFunction } from '../lambda/load-function';

/** API Gateway's payload limit. */
const MAX_BODY_BYTES = 10 * 1024 * 1024;
/** The functions' own timeout, as in AWS. */
const TIMEOUT_MS = FUNCTION_TIMEOUT_SECONDS * 1000;
/** How long stopping waits for requests already running to be answered before cutting them. */
const SHUTDOWN_GRACE_MS = 10_000;

type LambdaHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<unknown>;

export interface HttpApi {
  url: string;
  port: number;
  /** Stops accepting and answers the requests already running (up to 10 s), then closes every connection. */
  close(): Promise<void>;
}

/** Requests outside the API that another local server answers (the sandbox checkout at `/sandbox`). */
export interface LocalMount {
  matches(pathname: string): boolean;
  handle(req: IncomingMessage, res: ServerResponse): void;
}

export async function startHttpApi(options: { port: number; host?: string; mounts?: readonly LocalMount[] }): Promise<HttpApi> {
  const mounts = options.mounts ?? [];
  const server = createServer((req, res) => {
    const mount = mounts.length === 0 ? undefined : mountFor(mounts, req.url);
    if (mount !== undefined) {
      mount.handle(req, res);
      return;
    }
    handle(req)
      .then((result) => writeLambdaResult(res, result))
      .catch((error: unknown) => {
        // Only reached when a handler throws past its own error mapping: API Gateway's answer to that.
        console.error('[http-api] handler failed', error);
        writeLambdaResult(res, { statusCode: 500, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ error: 'Internal server error', code: 'INTERNAL_ERROR' }) });
      });
  });
  server.keepAliveTimeout = 5_000;
  server.on('clientError', answerUnparsable);
  await listen(server, options.port, options.host);
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://localhost:${port}`,
    port,
    close: () => closeGracefully(server, { graceMs: SHUTDOWN_GRACE_MS }),
  };
}

/** The mount serving `url`'s path; none for a target that is not a URL path (the API answers it). */
function mountFor(mounts: readonly LocalMount[], url: string | undefined): LocalMount | undefined {
  let pathname: string;
  try {
    pathname = new URL(url ?? '/', 'http://localhost').pathname;
  } catch {
    return undefined;
  }
  return mounts.find((candidate) => candidate.matches(pathname));
}

/**
 * A request Node could not parse (an unknown method, headers over its size limit, a malformed request line):
 * answered in the spec's error body like every other refusal, instead of Node's bare status or a reset.
 */
function answerUnparsable(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable) return;
  const [status, code, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'HEADERS_TOO_LARGE', 'Request headers too large']
      : [400, 'BAD_REQUEST', 'The request could not be parsed as HTTP'];
  const body = JSON.stringify({ error: message, code });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\nx-content-type-options: nosniff\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

async function handle(req: IncomingMessage): Promise<unknown> {
  const body = await readBody(req, MAX_BODY_BYTES);
  if (body === 'too-large') {
    return { statusCode: 413, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ error: 'Request body too large', code: 'PAYLOAD_TOO_LARGE' }) };
  }
  const url = new URL(req.url ?? '/', 'http://localhost');
  const method = (req.method ?? 'GET').toUpperCase();
  // The admin console's files (`/admin`, outside the API's prefix): served locally as CloudFront would in AWS.
  const asset = await consoleAsset(method, url.pathname);
  if (asset !== undefined) return asset;
  const resolved = resolveRoute(method, url.pathname);
  const matched = 'route' in resolved ? resolved : undefined;
  const functionName = matched?.route.name ?? fallbackRoute.name;
  const event = toHttpApiEvent(
    { method, url, headers: req.headers, body, sourceIp: req.socket.remoteAddress ?? '127.0.0.1' },
    matched === undefined ? '$default' : routeKey(matched.route),
    matched?.pathParameters,
  );
  const handler = await loadFunction<LambdaHandler>(functionName);
  const usage: InvocationUsage = { dynamodbCalls: 0 };
  const result = await invokeFunction(handler, event, functionName, TIMEOUT_MS, usage);
  return withUsage(result, usage);
}

/**
 * Local only: the DynamoDB calls the function made, in `x-local-dynamodb-calls` (what `npm run bench` and the
 * tests count per request; API Gateway sends no such header). A result that is not a structured response is
 * left as it is (API Gateway turns it into a 200 JSON body).
 */
export const DYNAMODB_CALLS_HEADER = 'x-local-dynamodb-calls';

function withUsage(result: unknown, usage: InvocationUsage): unknown {
  if (typeof result !== 'object' || result === null || !('statusCode' in result)) return result;
  const { headers } = result as { headers?: Record<string, string> };
  return { ...result, headers: { ...headers, [DYNAMODB_CALLS_HEADER]: String(usage.dynamodbCalls) } };
}
