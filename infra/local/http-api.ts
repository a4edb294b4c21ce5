/**
 * The local stand-in for API Gateway's HTTP API: serves every route of `infra/routes.ts` by building the same
 * payload-2.0 event AWS would send and invoking the same `functions/<name>.ts` handler in this process.
 * Paths no route serves go to the `$default` function, as in AWS. A HEAD request runs its route's function like
 * the GET (see `infra/routes.ts`); Node's server then sends the status and headers, `content-length` included,
 * and drops the body, as HTTP requires of any server.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { fallbackRoute, resolveRoute, routeKey } from '../routes';
import { lambdaContext, toHttpApiEvent, writeLambdaResult } from './lambda-adapter';
import { closeGracefully, listen, readBody } from './http-server';

/** API Gateway's payload limit. */
const MAX_BODY_BYTES = 10 * 1024 * 1024;
/** API Gateway's integration timeout. */
const TIMEOUT_MS = 30_000;
/** How long stopping waits for requests already running to be answered before cutting them. */
const SHUTDOWN_GRACE_MS = 10_000;

type LambdaHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<unknown>;

const handlers = new Map<string, Promise<LambdaHandler>>();

/** Imports `functions/<name>.ts` once, like a warm Lambda container. */
function loadHandler(name: string): Promise<LambdaHandler> {
  let handler = handlers.get(name);
  if (handler === undefined) {
    handler = import(`../../functions/${name}.ts`).then((module: { handler: LambdaHandler }) => module.handler);
    handlers.set(name, handler);
  }
  return handler;
}

export interface HttpApi {
  url: string;
  port: number;
  /** Stops accepting and answers the requests already running (up to 10 s), then closes every connection. */
  close(): Promise<void>;
}

export async function startHttpApi(options: { port: number; host?: string }): Promise<HttpApi> {
  const server = createServer((req, res) => {
    handle(req)
      .then((result) => writeLambdaResult(res, result))
      .catch((error: unknown) => {
        // Only reached when a handler throws past its own error mapping: API Gateway's answer to that.
        console.error('[http-api] handler failed', error);
        writeLambdaResult(res, { statusCode: 500, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ error: 'Internal server error', code: 'INTERNAL_ERROR' }) });
      });
  });
  server.keepAliveTimeout = 5_000;
  await listen(server, options.port, options.host);
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://localhost:${port}`,
    port,
    close: () => closeGracefully(server, { graceMs: SHUTDOWN_GRACE_MS }),
  };
}

async function handle(req: IncomingMessage): Promise<unknown> {
  const body = await readBody(req, MAX_BODY_BYTES);
  if (body === 'too-large') {
    return { statusCode: 413, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ error: 'Request body too large', code: 'PAYLOAD_TOO_LARGE' }) };
  }
  const url = new URL(req.url ?? '/', 'http://localhost');
  const method = (req.method ?? 'GET').toUpperCase();
  const resolved = resolveRoute(method, url.pathname);
  const matched = 'route' in resolved ? resolved : undefined;
  const functionName = matched?.route.name ?? fallbackRoute.name;
  const event = toHttpApiEvent(
    { method, url, headers: req.headers, body, sourceIp: req.socket.remoteAddress ?? '127.0.0.1' },
    matched === undefined ? '$default' : routeKey(matched.route),
    matched?.pathParameters,
  );
  const handler = await loadHandler(functionName);
  return handler(event, lambdaContext(functionName, TIMEOUT_MS));
}
