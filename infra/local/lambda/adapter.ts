/**
 * Turns a Node HTTP request into the API Gateway HTTP API (payload format 2.0) event that AWS would deliver,
 * and a Lambda's result back into an HTTP response, following API Gateway's rules for both.
 */
import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AsyncLocalStorage } from 'node:async_hooks';
import { InvokeStoreBase } from '@aws/lambda-invoke-store';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';

/**
 * Content types API Gateway passes as text; every other body arrives base64-encoded. So does a "text" body that
 * is not valid UTF-8: decoding it would replace its bad bytes with U+FFFD, and the HMAC and the idempotency
 * fingerprint would then cover other bytes than the caller sent. Passed as they came, the chain refuses them.
 */
const TEXT_CONTENT_TYPE = /^(text\/|application\/(json|xml|javascript|x-www-form-urlencoded)|[^;]*\+json)/i;

export interface RawRequest {
  method: string;
  url: URL;
  headers: IncomingMessage['headers'];
  body: Buffer;
  sourceIp: string;
}

export function toHttpApiEvent(
  request: RawRequest,
  routeKey: string,
  pathParameters: Record<string, string> | undefined,
): APIGatewayProxyEventV2 {
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    if (name === 'cookie') cookies.push(...String(value).split(/;\s*/));
    else headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const query: Record<string, string> = {};
  for (const [name, value] of request.url.searchParams) {
    query[name] = name in query ? `${query[name]},${value}` : value;
  }
  const now = new Date();
  const requestId = randomUUID();
  const isText = request.body.length === 0 || (TEXT_CONTENT_TYPE.test(headers['content-type'] ?? '') && isUtf8(request.body));
  return {
    version: '2.0',
    routeKey,
    rawPath: request.url.pathname,
    rawQueryString: request.url.search.replace(/^\?/, ''),
    ...(cookies.length > 0 ? { cookies } : {}),
    headers,
    ...(Object.keys(query).length > 0 ? { queryStringParameters: query } : {}),
    ...(pathParameters !== undefined && Object.keys(pathParameters).length > 0 ? { pathParameters } : {}),
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: (headers.host ?? 'localhost').split('.')[0] ?? 'localhost',
      http: {
        method: request.method,
        path: request.url.pathname,
        protocol: 'HTTP/1.1',
        sourceIp: request.sourceIp,
        userAgent: headers['user-agent'] ?? '',
      },
      requestId,
      routeKey,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    ...(request.body.length > 0
      ? { body: isText ? request.body.toString('utf8') : request.body.toString('base64') }
      : {}),
    isBase64Encoded: !isText,
  };
}

/**
 * The local runtime runs many invocations at once in this one process, as Lambda does when one execution
 * environment serves several (Lambda Managed Instances): with `AWS_LAMBDA_MAX_CONCURRENCY` set and each
 * invocation run in its own context of Lambda's InvokeStore, Powertools keeps its per-invocation state there
 * (the logger's keys, such as `partner_id` and `svc_tx_id`, and its level), so no request's keys reach another's
 * log lines. In AWS a function serves one invocation at a time and none of this applies.
 */
process.env.AWS_LAMBDA_MAX_CONCURRENCY ??= '1000';

/**
 * Lambda's InvokeStore for concurrent invocations (what `InvokeStore.getInstanceAsync(true)` makes), installed
 * where Powertools reads it (`globalThis.awslambda.InvokeStore`) synchronously, as this module loads: with
 * `AWS_LAMBDA_MAX_CONCURRENCY` set, Powertools refuses to log while no store is installed. It replaces whatever
 * a module that loaded earlier installed there (the AWS SDK installs the single-invocation store, which holds one
 * context for the whole process).
 */
class ConcurrentInvokeStore extends InvokeStoreBase {
  readonly #contexts = new AsyncLocalStorage<Record<string | symbol, unknown>>();
  /**
   * What is set outside any invocation (a module's initialisation, such as a BatchProcessor made when the handler
   * is built, or a test calling a handler directly): one context for the process, as Lambda's single store keeps.
   * Lambda's concurrent store throws there instead, which Powertools' batch utility (2.35) does not expect.
   */
  readonly #outside: Record<string | symbol, unknown> = {};

  getContext() {
    return this.#contexts.getStore();
  }

  hasContext() {
    return this.#contexts.getStore() !== undefined;
  }

  get<T = unknown>(key: string | symbol): T | undefined {
    return (this.#contexts.getStore() ?? this.#outside)[key] as T | undefined;
  }

  set<T = unknown>(key: string | symbol, value: T): void {
    if (this.isProtectedKey(key)) throw new Error(`Cannot modify protected Lambda context field: ${String(key)}`);
    (this.#contexts.getStore() ?? this.#outside)[key] = value;
  }

  run<T>(context: Record<string | symbol, unknown>, fn: () => T): T {
    return this.#contexts.run(context, fn);
  }
}
const invokeStore = new ConcurrentInvokeStore();
((globalThis as { awslambda?: { InvokeStore?: unknown } }).awslambda ??= {}).InvokeStore = invokeStore;

/** Where an invocation's scope holds the name of the function invoked (for the local table grants, `table-grants.ts`). */
const FUNCTION_NAME = Symbol('functionName');

/** The function whose invocation the caller runs in, or undefined outside any invocation (a test's own setup). */
export function invokedFunctionName(): string | undefined {
  return invokeStore.getContext()?.[FUNCTION_NAME] as string | undefined;
}

/** Where an invocation's scope holds what it used (its {@link InvocationUsage}). */
const USAGE = Symbol('usage');

/** What one invocation used: counted by the local runtime (the table grants' middleware counts DynamoDB calls). */
export interface InvocationUsage {
  dynamodbCalls: number;
}

/** The usage of the invocation the caller runs in, or undefined outside any invocation. */
export function invocationUsage(): InvocationUsage | undefined {
  return invokeStore.getContext()?.[USAGE] as InvocationUsage | undefined;
}

/**
 * One invocation of `handler`, as Lambda makes it: a fresh context (deadline `timeoutMs` from now) and invoke
 * scope. `usage`, when given, is filled in as the invocation runs.
 */
export function invokeFunction<Event, Result>(
  handler: (event: Event, context: Context) => Promise<Result>,
  event: Event,
  functionName: string,
  timeoutMs: number,
  usage: InvocationUsage = { dynamodbCalls: 0 },
): Promise<Result> {
  const context = lambdaContext(functionName, timeoutMs);
  const scope = { [InvokeStoreBase.PROTECTED_KEYS.REQUEST_ID]: context.awsRequestId, [FUNCTION_NAME]: functionName, [USAGE]: usage };
  return invokeStore.run(scope, () => handler(event, context));
}

export function lambdaContext(functionName: string, timeoutMs: number): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '256',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/**
 * Writes a Lambda result the way API Gateway does for payload 2.0: a structured result (`statusCode`) is
 * used as given; anything else is a 200 with the value as a JSON body.
 */
export function writeLambdaResult(response: ServerResponse, result: unknown): void {
  if (isStructured(result)) {
    const headers: Record<string, string | string[]> = { ...(result.headers as Record<string, string>) };
    if (result.cookies !== undefined && result.cookies.length > 0) headers['set-cookie'] = result.cookies;
    const body =
      result.body === undefined
        ? Buffer.alloc(0)
        : result.isBase64Encoded
          ? Buffer.from(result.body, 'base64')
          : Buffer.from(result.body, 'utf8');
    response.writeHead(result.statusCode ?? 200, { ...headers, 'content-length': body.length });
    response.end(body);
    return;
  }
  const body = Buffer.from(typeof result === 'string' ? result : JSON.stringify(result ?? null), 'utf8');
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
  response.end(body);
}

function isStructured(result: unknown): result is APIGatewayProxyStructuredResultV2 {
  return typeof result === 'object' && result !== null && 'statusCode' in result;
}
