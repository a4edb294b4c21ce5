/**
 * The middlewares of the HTTP chain (order and composition in `chain.ts`). Each is small and does one thing.
 */
import type { MiddlewareObj, Request } from '@middy/core';
import { z } from 'zod';
import { errors, fieldValidationError, formValidationError } from '../domain/errors';
import { countMetric, logger } from '../observability';
import { findJsonFault } from './json-limits';
import { errorResult, toHttpResponse } from './response';
import type { ChainContext, HttpEvent, HttpResponse } from './types';

export type ChainRequest = Request<HttpEvent, HttpResponse, Error, ChainContext>;
export type ChainMiddleware = MiddlewareObj<HttpEvent, HttpResponse, Error, ChainContext>;

/** Headers whose values are credentials: never logged. */
const SECRET_HEADERS = new Set(['authorization', 'x-api-key', 'x-svc-hmac', 'cookie', 'processor-signature', 'stripe-signature']);

export const redactHeaders = (headers: Record<string, string | undefined>) =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, SECRET_HEADERS.has(name) ? '[redacted]' : value]));

/**
 * Starts the request's state: the request id (API Gateway's, so log lines, the `x-request-id` header and
 * API Gateway's access log agree), lower-cased headers, and the exact raw body.
 */
export const requestState = (): ChainMiddleware => ({
  before: (request: ChainRequest) => {
    const { event, context } = request;
    const requestId = event.requestContext?.requestId ?? context.awsRequestId;
    event.headers = Object.fromEntries(
      Object.entries(event.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]),
    );
    const rawBody =
      event.body === undefined || event.body === null
        ? ''
        : event.isBase64Encoded
          ? Buffer.from(event.body, 'base64').toString('utf8')
          : event.body;
    context.svc = {
      requestId,
      caller: { kind: 'anonymous' },
      rawBody,
      json: undefined,
      body: undefined,
      query: undefined,
      params: undefined,
    };
    logger.appendKeys({ request_id: requestId, route: event.routeKey });
    logger.debug('Request received', { method: event.requestContext.http.method, path: event.rawPath, headers: redactHeaders(event.headers) });
  },
});

/**
 * Maps any error to the spec's error response. Runs after every other `onError` (it is registered first
 * after the logger), so later middlewares (idempotency) can still react to the error before it is mapped.
 * 5xx errors are logged with their cause; their details never reach the caller.
 */
export const errorMapper = (): ChainMiddleware => ({
  onError: (request: ChainRequest) => {
    const result = errorResult(request.error);
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
 * Parses the raw body as JSON. Malformed JSON is the caller's error: 400 VALIDATION_ERROR, never a 500. So is
 * JSON that nothing after this step could handle safely ({@link findJsonFault}: a lone surrogate in any string,
 * nesting too deep to recurse over): refused here, for every route, on the top-level field it sits in.
 */
export const jsonBody = (): ChainMiddleware => ({
  before: (request: ChainRequest) => {
    const { rawBody } = request.context.svc;
    if (rawBody.trim() === '') return;
    let json: unknown;
    try {
      json = JSON.parse(rawBody);
    } catch {
      throw formValidationError('Malformed JSON body');
    }
    const fault = findJsonFault(rawBody, json);
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
 * `details` is zod's flattened error: `fieldErrors` (field -> messages) and `formErrors`.
 */
export const validation = (schemas: Schemas): ChainMiddleware => ({
  before: (request: ChainRequest) => {
    const { event, context } = request;
    context.svc.body = parseWith(schemas.body, context.svc.json, 'Request body validation failed');
    context.svc.query = parseWith(schemas.query, event.queryStringParameters ?? {}, 'Query parameter validation failed');
    context.svc.params = parseWith(schemas.params, event.pathParameters ?? {}, 'Path parameter validation failed');
  },
});

function parseWith(schema: z.ZodType | undefined, input: unknown, message: string): unknown {
  if (schema === undefined) return input;
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const { fieldErrors, formErrors } = z.flattenError(result.error);
  throw errors.validation({ fieldErrors: fieldErrors as Record<string, string[]>, formErrors }, message);
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
export const cors = (): ChainMiddleware => {
  const addHeaders = (request: ChainRequest) => {
    if (request.response) request.response.headers = { ...request.response.headers, ...CORS_HEADERS };
  };
  return {
    before: (request: ChainRequest) => {
      if (request.event.requestContext.http.method !== 'OPTIONS') return undefined;
      return { statusCode: 204, headers: { ...CORS_HEADERS }, body: '' };
    },
    after: addHeaders,
    onError: addHeaders,
  };
};
