/**
 * The one middy chain every HTTP function is built with. Order (middy runs `before` in this order and
 * `onError`/`after` in reverse):
 *
 *   1. Powertools logger context (cold start, function name), tracer segment, metrics flush (AWS)
 *   2. request state: request id, lower-cased headers, exact raw body (a body that is not valid UTF-8 -> 400
 *      VALIDATION_ERROR, on every route, before anything reads it)
 *      (+ CORS on the public routes that ask for it: preflight answered, headers on every response)
 *   3. error mapper (its `onError` runs last: every error becomes the spec's body)
 *   4. body size, on routes that take a body: a raw body over the route's `maxBodyBytes` (default
 *      {@link MAX_BODY_BYTES}) -> 413 PAYLOAD_TOO_LARGE before anything reads it (no HMAC over 6 MB, no
 *      idempotency claim, no parse). A route without a body schema checks the size only if it sets `maxBodyBytes`
 *   5. access steps by the route's `access` (see `access.ts`):
 *      - 'partner-mutation': API key -> HMAC over the raw body -> query `partner_id` in the key's scope -> rate
 *        limit (authenticated requests only) -> idempotency-key present -> idempotency
 *      - 'partner-read':     API key -> query `partner_id` in the key's scope
 *      - 'admin':            admin bearer token (role admin)
 *      - 'public':           none
 *   6. JSON body parse, on routes that take a body: malformed JSON, or JSON the parse would silently change (an
 *      inexact number, a key given twice) -> 400 VALIDATION_ERROR (idempotency releases the key, as on any
 *      validation failure)
 *   7. zod validation of body, query and path parameters (-> 400 VALIDATION_ERROR with details)
 *   8. the handler, whose {@link HttpResult} is serialised by `toHttpResponse`; cut off (503 REQUEST_TIMED_OUT, the key released)
 *      {@link ANSWER_RESERVE_MS} before the function's own deadline, and run under that instant
 *      (`lib/deadline.ts`) so the calls it makes end before it
 *
 * A step that answers early (CORS preflight, idempotent replay) ends the chain: no `after` runs, so the chain
 * itself then runs the Powertools cleanups (see {@link cleanUpAfterEarlyResponse}).
 */
import middy, { type Request } from '@middy/core';
import { cleanupMiddlewares } from '@aws-lambda-powertools/commons';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import type { z } from 'zod';
import { runWithDeadline } from '../deadline';
import { errors } from '../domain/errors';
import { logger, metricsMiddleware, tracer } from '../observability';
import { adminToken, apiKey, hmacSignature, idempotency, idempotencyKeyHeader, queryPartnerScope, rateLimit } from './access';
import { MAX_BODY_BYTES } from './json-limits';
import { bodySize, type ChainStep, cors, errorMapper, jsonBody, requestState, validation } from './middlewares';
import { toHttpResponse } from './response';
import type { HttpPorts } from './ports';
import type { RouteDoc } from './route-doc';
import type { IdempotencyScope } from '../domain/caller';
import type { FoldedCompletion } from '../domain/idempotency';
import type { ChainContext, HttpEvent, HttpRequest, HttpResponse, HttpResult, IdempotencyLease, RequestState } from './types';

type Infer<T> = T extends z.ZodType ? z.output<T> : undefined;

export type Access = 'public' | 'admin' | 'partner-read' | 'partner-mutation';

export interface RouteOptions<
  A extends Access,
  B extends z.ZodType | undefined,
  Q extends z.ZodType | undefined,
  P extends z.ZodType | undefined,
> {
  access: A;
  /** Public, browser-facing routes: answer CORS preflights and add CORS headers (decisions.md §10). */
  cors?: boolean;
  /** Refuse platform-wide API keys (403 API_KEY_SCOPE_FORBIDDEN): routes that act for the key's own partner. */
  partnerOnly?: boolean;
  /**
   * The body names a payee (`partner_id`, `client_id`: the payment routes): the API key step reads it with the
   * key, in one BatchGetItem, and the handler gets it as `payee` (see `apiKey` in `access.ts`).
   */
  prefetchPayee?: boolean;
  /**
   * The most UTF-8 bytes of raw body the route takes (413 PAYLOAD_TOO_LARGE above), checked before any parse.
   * Defaults to {@link MAX_BODY_BYTES} on a route with a `body` schema. A route that reads its raw body itself
   * (the processor webhook: Stripe's events are larger) sets its own; without one it has no limit but the API's.
   * A route raising it past ~40 KB may meet `MAX_BODY_VALUES` when its body has to be walked.
   */
  maxBodyBytes?: number;
  body?: B;
  query?: Q;
  params?: P;
  /** What the API reference says of the route (`route-doc.ts`); every route of the route table has one. */
  doc?: RouteDoc;
}

/**
 * What a partner mutation's handler gets of its idempotency key: the scope it runs under (decisions.md §4), and
 * `answer`, which makes the answer it will give (`status`, `body`) the key's stored replay, for the use case to
 * write together with its work (a transaction created): then the chain does not complete the key separately.
 * The handler must answer exactly that (the chain checks, and completes the key itself on any difference).
 */
export interface HandlerIdempotency extends IdempotencyScope {
  answer(status: number, body: unknown): FoldedCompletion;
}

/** Partner mutations always run under an idempotency scope; other routes have none. */
type ScopeOf<A extends Access> = A extends 'partner-mutation' ? HandlerIdempotency : undefined;

export type RouteHandler<A extends Access, B, Q, P> = (
  request: HttpRequest<Infer<B>, Infer<Q>, Infer<P>, ScopeOf<A>>,
) => Promise<HttpResult>;

/**
 * How long before the function's own deadline the handler is cut off: the time the chain keeps to release (or
 * complete) the idempotency key and answer. middy's default, 5 ms, is too short for a DynamoDB write.
 */
const ANSWER_RESERVE_MS = 2_000;

/**
 * The `httpRoute` of a process, its access steps and error mapper talking to `ports` (wired once, at the
 * composition point: `lib/composition/http-route.ts`, which every function takes `httpRoute` from).
 */
export function createHttpRoute(ports: HttpPorts) {
  return function httpRoute<
    A extends Access,
    B extends z.ZodType | undefined = undefined,
    Q extends z.ZodType | undefined = undefined,
    P extends z.ZodType | undefined = undefined,
  >(options: RouteOptions<A, B, Q, P>, handle: RouteHandler<A, B, Q, P>) {
    return buildRoute(ports, options, handle);
  };
}

/**
 * Builds a Lambda handler for an HTTP API (payload v2) route: the chain above around `handle`.
 */
function buildRoute<
  A extends Access,
  B extends z.ZodType | undefined,
  Q extends z.ZodType | undefined,
  P extends z.ZodType | undefined,
>(ports: HttpPorts, options: RouteOptions<A, B, Q, P>, handle: RouteHandler<A, B, Q, P>) {
  const lambdaHandler = async (event: HttpEvent, context: ChainContext): Promise<HttpResponse> => {
    const { svc } = context;
    if (options.access === 'partner-mutation' && svc.idempotency === undefined) throw new Error('a partner mutation ran without its idempotency step');
    const deadline = Date.now() + context.getRemainingTimeInMillis() - ANSWER_RESERVE_MS;
    const result = await runWithDeadline(deadline, () => handle({
      requestId: svc.requestId,
      caller: svc.caller,
      idempotency: (svc.idempotency === undefined ? undefined : handlerIdempotency(svc, svc.idempotency)) as ScopeOf<A>,
      method: event.requestContext.http.method,
      path: event.rawPath,
      body: svc.body as Infer<B>,
      query: svc.query as Infer<Q>,
      params: svc.params as Infer<P>,
      headers: event.headers,
      rawBody: svc.rawBody,
      payee: svc.payee,
    }));
    return toHttpResponse(result, svc.requestId);
  };

  const steps = routeSteps(options, ports);
  const chain = middy<HttpEvent, HttpResponse, Error, ChainContext>(lambdaHandler, {
    timeoutEarlyInMillis: ANSWER_RESERVE_MS,
    // A named, retryable answer (the 5xx releases the idempotency key) instead of a generic 500.
    timeoutEarlyResponse: () => {
      throw errors.requestTimedOut();
    },
    requestEnd: cleanUpAfterEarlyResponse,
  })
    .use(injectLambdaContext(logger, { resetKeys: true, logEvent: false })) // events carry credentials: never logged
    .use(captureLambdaHandler(tracer, { captureResponse: false }))
    .use(metricsMiddleware())
    .use(steps);
  // The route's contract, for the OpenAPI document: the very schemas the chain validates with, and the error codes
  // its steps declare (with the chain's own timeout answer).
  const stepErrorCodes = [...new Set(['REQUEST_TIMED_OUT', ...steps.flatMap((step) => step.errorCodes)])];
  return Object.assign(chain, { contract: { ...options, stepErrorCodes } as RouteContract });
}

/** What an `httpRoute` handler carries: its options, and the error codes its chain's steps may answer with. */
export type RouteContract = RouteOptions<Access, z.ZodType | undefined, z.ZodType | undefined, z.ZodType | undefined> & {
  readonly stepErrorCodes: readonly string[];
};

/** The steps a route's options give its chain, in order, after the Powertools middlewares. */
function routeSteps(options: RouteOptions<Access, z.ZodType | undefined, z.ZodType | undefined, z.ZodType | undefined>, ports: HttpPorts): ChainStep[] {
  return [
    requestState(),
    ...(options.cors === true ? [cors()] : []),
    errorMapper(ports.isDependencyUnavailable),
    ...sizeStep(options),
    ...accessSteps(options, ports),
    ...(options.body === undefined ? [] : [jsonBody()]),
    validation({ body: options.body, query: options.query, params: options.params }),
  ];
}

/**
 * When a step answered early, middy skipped every `after`, the Powertools ones included: run the cleanups they
 * registered in `request.internal` (logger keys reset, metrics flushed, trace segment closed), as Powertools' own
 * idempotency middleware does, so nothing of this request reaches the next one's log lines or metrics. Done once
 * here for every step that may answer early, rather than by each of them.
 */
async function cleanUpAfterEarlyResponse(request: Request): Promise<void> {
  if ('earlyResponse' in request) await cleanupMiddlewares(request);
}

function handlerIdempotency(svc: RequestState, lease: IdempotencyLease): HandlerIdempotency {
  const { owner, endpoint, idempotencyKey, fingerprint, nonce } = lease;
  return {
    owner,
    endpoint,
    idempotencyKey,
    fingerprint,
    nonce,
    answer: (status, body) => {
      // Serialised as `toHttpResponse` serialises it, so the replay is byte for byte the answer.
      svc.foldedCompletion = { lease, response: { statusCode: status, body: body === undefined ? '' : JSON.stringify(body) }, committed: false };
      return svc.foldedCompletion;
    },
  };
}

/** Step 4: the raw body's size, on a route that takes a body (default limit) or sets a limit of its own. */
function sizeStep(options: { body?: z.ZodType | undefined; maxBodyBytes?: number | undefined }): ChainStep[] {
  if (options.maxBodyBytes !== undefined) return [bodySize(options.maxBodyBytes)];
  return options.body === undefined ? [] : [bodySize(MAX_BODY_BYTES)];
}

function accessSteps(options: { access: Access; partnerOnly?: boolean | undefined; prefetchPayee?: boolean | undefined }, ports: HttpPorts): ChainStep[] {
  const keyOptions = { partnerOnly: options.partnerOnly ?? false, prefetchPayee: options.prefetchPayee ?? false };
  switch (options.access) {
    case 'public':
      return [];
    case 'admin':
      return [adminToken()];
    case 'partner-read':
      return [apiKey(keyOptions, ports), queryPartnerScope()];
    case 'partner-mutation':
      return [apiKey(keyOptions, ports), hmacSignature(ports), queryPartnerScope(), rateLimit(ports), idempotencyKeyHeader(), idempotency(ports)];
  }
}
