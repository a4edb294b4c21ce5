import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { Caller, IdempotencyScope } from '../domain/caller';
import type { KnownPayee } from '../domain/partner';
import type { StoredApiKey } from '../auth/api-keys';
import type { FoldedCompletion } from '../domain/idempotency';

export type HttpEvent = APIGatewayProxyEventV2;
export type HttpResponse = APIGatewayProxyStructuredResultV2;

/**
 * What a handler returns: the chain serialises it (body, content type, request id header). Either JSON (`body`,
 * the usual case) or text sent exactly as given (`text` with its `contentType`, e.g. a CSV report); which one is
 * told by `text` being present. Errors are always JSON, whatever the route returns.
 */
export type HttpResult = JsonResult | TextResult;

/** A JSON answer: `body` is serialised with `JSON.stringify`; no `body`, an empty one (204). */
export interface JsonResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  text?: never;
  contentType?: never;
}

/**
 * A non-JSON answer: `text` is the body as it is (UTF-8 on the wire), `contentType` its `content-type`, which a
 * `content-type` in `headers` cannot override. Meant for reads: the idempotency step stores and replays JSON
 * bodies only, so a partner mutation must not answer with text.
 */
export interface TextResult {
  status: number;
  text: string;
  contentType: string;
  /** `text` is the base64 of the bytes to send (a compressed body): sent with API Gateway's `isBase64Encoded`. */
  base64?: boolean;
  headers?: Record<string, string>;
  body?: never;
}

/** The idempotency key this request holds (see `access.ts`), until it completes or releases it. */
export interface IdempotencyLease extends IdempotencyScope {
  lockToken: string;
}

/** The state the chain's middlewares build up for one request, read by the handler. */
export interface RequestState {
  requestId: string;
  caller: Caller;
  apiKey?: StoredApiKey;
  /** The partner a mutation acts for (rate limit and idempotency both use it; worked out once). */
  owner?: string;
  /** The `partner_id` and `client_id` the raw body names, parsed once before validation (see `access.ts`). */
  namedIds?: { partner_id?: unknown; client_id?: unknown };
  /** The payee the body names, read with the API key (routes with `prefetchPayee`), whoever it belongs to. */
  payee?: KnownPayee;
  idempotency?: IdempotencyLease;
  /** The answer the handler had written with its work as the key's replay (`HandlerIdempotency.answer`). */
  foldedCompletion?: FoldedCompletion;
  /** The exact request body as received (decoded from base64 when API Gateway encoded it); always valid UTF-8. */
  rawBody: string;
  /** The parsed JSON body, `undefined` when the request had none. */
  json: unknown;
  body: unknown;
  query: unknown;
  params: unknown;
}

export interface ChainContext extends Context {
  svc: RequestState;
}

/** The validated input a handler receives. */
export interface HttpRequest<TBody, TQuery, TParams, TIdempotency = IdempotencyScope | undefined> {
  requestId: string;
  caller: Caller;
  /** On partner mutations (and only there): the idempotency scope this request runs under. */
  idempotency: TIdempotency;
  method: string;
  /** The raw request path, e.g. `/api/v1/clients`. */
  path: string;
  body: TBody;
  query: TQuery;
  params: TParams;
  headers: Record<string, string | undefined>;
  rawBody: string;
  /**
   * Routes with `prefetchPayee`: the payee the body names, as read with the API key (`withKnownPayee` serves it
   * to a use case instead of reading it again). Not yet checked against the caller: the use case does that.
   */
  payee: KnownPayee | undefined;
}
