/**
 * The middlewares of the HTTP chain (order and composition in `chain.ts`). Each is small and does one thing.
 */
import type { MiddlewareObj, Request } from '@middy/core';
import * as z from 'zod';
import { errors, fieldValidationError, formValidationError } from '../domain/errors';
import { countMetric, logger } from '../observability';
import { exceedsBytes, findJsonFault, LONE_SURROGATE } from './json-limits';
import { findLiteralFault } from './json-literals';
import type { DependencyFailureCheck } from './ports';
import { errorResult, toHttpResponse } from './response';
import type { ChainContext, HttpEvent, HttpResponse } from './types';

export type ChainRequest = Request<HttpEvent, HttpResponse, Error, ChainContext>;
export type ChainMiddleware = MiddlewareObj<HttpEvent, HttpResponse, Error, ChainContext>;

/**
 * A step of the chain and the error codes it may answer with, declared beside the code that throws them: the
 * OpenAPI document lists, for each route, the codes of the steps its options give it (`routeSteps` in `chain.ts`).
 */
export type ChainStep = ChainMiddleware & { readonly errorCodes: readonly string[] };

export const stepAnswering = (errorCodes: readonly string[], step: ChainMiddleware): ChainStep => ({ ...step, errorCodes });

/** Headers whose values are credentials: never logged. */
const SECRET_HEADERS = new Set(['authorization', 'x-api-key', 'x-svc-hmac', 'cookie', 'processor-signature', 'stripe-signature']);

export const redactHeaders = (headers: Record<string, string | undefined>) =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, SECRET_HEADERS.has(name) ? '[redacted]' : value]));

/**
 * Starts the request's state: the request id (API Gateway's, so log lines, the `x-request-id` header and
 * API Gateway's access log agree), lower-cased headers, and the exact raw body ({@link exactText}).
 */
export const requestState = (): ChainStep => stepAnswering(['VALIDATION_ERROR'], {
  before: (request: ChainRequest) => {
    const { event, context } = request;
    const requestId = event.requestContext?.requestId ?? context.awsRequestId;
    event.headers = Object.fromEntries(
      Object.entries(event.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]),
    );
    const rawBody = exactText(event);
    context.svc = {
      requestId,
      caller: { kind: 'anonymous' },
      rawBody: rawBody ?? '',
      json: undefined,
      body: undefined,
      query: undefined,
      params: undefined,
    };
    logger.appendKeys({ request_id: requestId, route: event.routeKey });
    logger.debug('Request received', { method: event.requestContext.http.method, path: event.rawPath, headers: redactHeaders(event.headers) });
    if (rawBody === undefined) throw formValidationError('The request body is not valid UTF-8');
  },
});

/** Fails on any byte sequence that is not UTF-8 (bad bytes, overlong forms, encoded surrogates); keeps a BOM. */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });


/**
 * The body as the text of exactly the bytes sent, or `undefined` when those bytes are not UTF-8. The HMAC and
 * the idempotency fingerprint are computed over this text's UTF-8 bytes, so it must encode back to the same
 * bytes: a decoder that replaced bad bytes with U+FFFD would let a signature over the repaired text pass, and
 * give two different bodies one fingerprint. Refused for every route, before any step reads the body.
 */
function exactText(event: HttpEvent): string | undefined {
  if (event.body === undefined || event.body === null) return '';
  if (!event.isBase64Encoded) return LONE_SURROGATE.test(event.body) ? undefined : event.body;
  try {
    return UTF8.decode(Buffer.from(event.body, 'base64'));
  } catch {
    return undefined;
  }
}

/**
 * Maps any error to the spec's error response. Runs after every other `onError` (it is registered first
 * after the logger), so later middlewares (idempotency) can still react to the error before it is mapped.
 * 5xx errors are logged with their cause; their details never reach the caller.
 */
export const errorMapper = (isDependencyUnavailable: DependencyFailureCheck): ChainStep => stepAnswering(['INTERNAL_ERROR', 'SERVICE_UNAVAILABLE'], {
  onError: (request: ChainRequest) => {
    const result = errorResult(request.error, isDependencyUnavailable);
    if (result.status >= 500) {
      logger.error('Request failed', { error: request.error as Error });
      countMetric('ServerErrors');
    } else {
      logger.info('Request rejected', { status: result.status, code: (result.body as { code: string }).code });
      countMetric('ClientErrors');
    }
    request.response = toHttpResponse(result, request.context.svc?.requestId ?? request.context.awsRequestId);
  },
});

/**
 * Refuses a raw body of more than `maxBytes` UTF-8 bytes: 413 PAYLOAD_TOO_LARGE, a caller error, before anything
 * parses or walks it, so a body's size, not its shape, bounds the work every later step does. Measured in O(1)
 * for a body far over or under the limit.
 */
export const bodySize = (maxBytes: number): ChainStep => stepAnswering(['PAYLOAD_TOO_LARGE'], {
  before: (request: ChainRequest) => {
    if (exceedsBytes(request.context.svc.rawBody, maxBytes)) throw errors.payloadTooLarge(maxBytes);
  },
});

/**
 * Parses the raw body as JSON, its size already checked ({@link bodySize}). Malformed JSON is the caller's error:
 * 400 VALIDATION_ERROR, never a 500. So is JSON that nothing after this step could handle safely
 * ({@link findJsonFault}: a lone surrogate in any string, nesting too deep to recurse over), and JSON that the
 * parse would silently change ({@link findLiteralFault}: a number a double cannot hold exactly, a key given twice):
 * refused here, for every route, on the top-level field it sits in.
 */
export const jsonBody = (): ChainStep => stepAnswering(['VALIDATION_ERROR'], {
  before: (request: ChainRequest) => {
    const { rawBody } = request.context.svc;
    if (rawBody.trim() === '') return;
    let json: unknown;
    try {
      json = JSON.parse(rawBody);
    } catch {
      throw formValidationError('Malformed JSON body');
    }
    const fault = findJsonFault(rawBody, json) ?? findLiteralFault(rawBody);
    if (fault !== undefined) {
      throw fault.field === undefined ? formValidationError(fault.message) : fieldValidationError(fault.field, fault.message, 'Request body validation failed');
    }
    request.context.svc.json = json;
  },
});

export interface Schemas {
  body?: z.ZodType | undefined;
  query?: z.ZodType | undefined;
  params?: z.ZodType | undefined;
}

/**
 * Validates body, query string and path parameters with zod. A failure is a 400 VALIDATION_ERROR whose
 * `details` is zod's flattened error, bounded ({@link boundedDetails}): `fieldErrors` (field -> messages) and
 * `formErrors`.
 */
export const validation = (schemas: Schemas): ChainStep => stepAnswering(['VALIDATION_ERROR'], {
  before: (request: ChainRequest) => {
    const { event, context } = request;
    context.svc.body = parseWith(schemas.body, context.svc.json, 'Request body validation failed');
    context.svc.query = parseWith(schemas.query, event.queryStringParameters ?? {}, 'Query parameter validation failed');
    context.svc.params = parseWith(schemas.params, event.pathParameters ?? {}, 'Path parameter validation failed');
  },
});

function parseWith(schema: z.ZodType | undefined, input: unknown, message: string): unknown {
  if (schema === undefined) return input;
  const result = schema.safeParse(input, { error: unrecognizedKeysMessage });
  if (result.success) return result.data;
  const { fieldErrors, formErrors } = z.flattenError(result.error);
  throw errors.validation(boundedDetails(fieldErrors as Record<string, string[]>, formErrors), message);
}

/** How much of its mistakes a VALIDATION_ERROR lists; the rest are counted ("… and N more"). */
const DETAILS_LIMITS = { formErrors: 20, fields: 50, messagesPerField: 20, messageChars: 200 };

/**
 * zod's message for unknown keys names every one of them (1.17M keys made an 11.6 MB answer): this one names the
 * first few and counts the others. Other issues keep zod's own message.
 */
function unrecognizedKeysMessage(issue: z.core.$ZodRawIssue): string | undefined {
  if (issue.code !== 'unrecognized_keys') return undefined;
  const { keys } = issue;
  const named: string[] = [];
  let chars = 0;
  for (const key of keys) {
    const quoted = `"${key}"`;
    if (named.length > 0 && chars + quoted.length > DETAILS_LIMITS.messageChars / 2) break;
    named.push(quoted);
    chars += quoted.length + 2;
  }
  const more = keys.length - named.length;
  return `Unrecognized key${keys.length > 1 ? 's' : ''}: ${named.join(', ')}${more > 0 ? ` … and ${more} more` : ''}`;
}

/**
 * The details of a VALIDATION_ERROR, bounded whatever the input: at most {@link DETAILS_LIMITS} form errors,
 * fields, and messages per field, each message cut to its character limit. An answer's size must not grow with the
 * request's (in AWS a response over 6 MB fails the invocation: a 5xx for a caller's mistake).
 */
function boundedDetails(fieldErrors: Record<string, string[]>, formErrors: string[]) {
  const fields = Object.keys(fieldErrors);
  const moreFields = fields.length - DETAILS_LIMITS.fields;
  const forms = firstOf(formErrors, DETAILS_LIMITS.formErrors - (moreFields > 0 ? 1 : 0));
  if (moreFields > 0) forms.push(`… and ${moreFields} more fields with errors`);
  return {
    fieldErrors: Object.fromEntries(
      fields.slice(0, DETAILS_LIMITS.fields).map((field) => [field, firstOf(fieldErrors[field] ?? [], DETAILS_LIMITS.messagesPerField)]),
    ),
    formErrors: forms,
  };
}

/** At most `max` messages, each cut short, the last one counting those left out. */
function firstOf(messages: string[], max: number): string[] {
  const kept = messages.length <= max ? messages : [...messages.slice(0, max - 1), `… and ${messages.length - max + 1} more`];
  return kept.map(cutShort);
}

function cutShort(message: string): string {
  const limit = DETAILS_LIMITS.messageChars;
  if (message.length <= limit) return message;
  const lastUnit = message.charCodeAt(limit - 1);
  const end = lastUnit >= 0xd800 && lastUnit <= 0xdbff ? limit - 1 : limit; // never half a surrogate pair
  return `${message.slice(0, end)}… and ${message.length - end} more characters`;
}

const CORS_HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'GET, OPTIONS',
  'Access-Control-Allow-Headers': 'content-type',
  'Access-Control-Max-Age': '600',
};

/**
 * For public browser-facing routes only: answers the preflight (OPTIONS) and adds the CORS headers to every
 * response, errors included (registered before the error mapper, so its `onError` runs after it).
 */
export const cors = (): ChainStep => {
  const addHeaders = (request: ChainRequest) => {
    if (request.response) request.response.headers = { ...request.response.headers, ...CORS_HEADERS };
  };
  return stepAnswering([], {
    before: (request: ChainRequest) => {
      if (request.event.requestContext.http.method !== 'OPTIONS') return undefined;
      return { statusCode: 204, headers: { ...CORS_HEADERS }, body: '' };
    },
    after: addHeaders,
    onError: addHeaders,
  });
};
