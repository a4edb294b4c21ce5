/**
 * The one place responses are shaped: JSON bodies, text bodies (a CSV report) passed through as they are, the
 * request id header, and the mapping from errors to the spec's error body `{ error, code }` (+ `details` for
 * VALIDATION_ERROR, decisions.md §3).
 */
import { ServiceError } from '../domain/errors';
import type { DependencyFailureCheck } from './ports';
import type { HttpResponse, HttpResult, JsonResult } from './types';

export const REQUEST_ID_HEADER = 'x-request-id';

/** On every answer: a browser takes each body for the content type it is sent with, never for what it looks like. */
const NO_SNIFF = { 'x-content-type-options': 'nosniff' };

export function toHttpResponse(result: HttpResult, requestId: string): HttpResponse {
  const headers: Record<string, string> = { [REQUEST_ID_HEADER]: requestId, ...NO_SNIFF, ...result.headers };
  if (result.text !== undefined) {
    // Sent as a string with isBase64Encoded unset: API Gateway (and the local adapter) write it as UTF-8 bytes.
    const rest = Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'content-type'));
    return {
      statusCode: result.status,
      headers: { 'content-type': result.contentType, ...rest },
      body: result.text,
      ...(result.base64 === true ? { isBase64Encoded: true } : {}),
    };
  }
  if (result.body === undefined) return { statusCode: result.status, headers, body: '' };
  return {
    statusCode: result.status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
    body: JSON.stringify(result.body),
  };
}

/**
 * The body and headers a caller sees for an error. A dependency that is down, overloaded or missing (as
 * `isDependencyUnavailable`, the adapters' own judgement of their errors, says) is a 503 SERVICE_UNAVAILABLE with
 * `Retry-After` (retry, with the same idempotency key): the service's dependency failing, not the caller's
 * mistake. Any other unexpected error is a generic 500. Never the error's own message.
 */
export function errorResult(error: unknown, isDependencyUnavailable: DependencyFailureCheck): JsonResult {
  if (error instanceof ServiceError) {
    const body: Record<string, unknown> = {
      error: error.expose ? error.message : 'The service could not complete the request',
      code: error.code,
    };
    if (error.details !== undefined) body.details = error.details;
    return { status: error.status, body, headers: error.headers };
  }
  if (isDependencyUnavailable(error)) {
    return { status: 503, body: { error: 'A dependency of the service is unavailable, retry shortly', code: 'SERVICE_UNAVAILABLE' }, headers: { 'Retry-After': '1' } };
  }
  return { status: 500, body: { error: 'Internal server error', code: 'INTERNAL_ERROR' } };
}
