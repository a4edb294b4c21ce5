/**
 * The processor sandbox's refusals, in Stripe's error shape (`{ error: { type, code, message, param } }`) and
 * with Stripe's statuses, so the stripe SDK raises the same error classes it raises against Stripe.
 */

export interface StripeErrorBody {
  type: 'invalid_request_error' | 'card_error' | 'idempotency_error' | 'api_error';
  message: string;
  code?: string;
  param?: string;
  doc_url?: string;
  [extra: string]: unknown;
}

/**
 * A request refused before it changed anything: answered with Stripe's error shape, and (as at Stripe,
 * where validation failures save no idempotent result) not stored under the request's idempotency key.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: StripeErrorBody,
  ) {
    super(body.message);
  }
}

/** Stripe's `invalid_request_error`; `code` adds the `doc_url` Stripe gives every coded error. */
export function invalidRequest(message: string, details: { param?: string; code?: string; status?: number; extra?: Record<string, unknown> } = {}): ApiError {
  return new ApiError(details.status ?? 400, {
    type: 'invalid_request_error',
    message,
    ...(details.code !== undefined ? { code: details.code, doc_url: docUrl(details.code) } : {}),
    ...(details.param !== undefined ? { param: details.param } : {}),
    ...details.extra,
  });
}

/** Stripe's documentation page of an error code, as its errors link it. */
export function docUrl(code: string): string {
  return `https://stripe.com/docs/error-codes/${code.replace(/_/g, '-')}`;
}

/** Stripe answers an unknown id in the path with 404, and one in the parameters with 400. */
export function noSuchResource(kind: string, id: string, param: string, status: 400 | 404): ApiError {
  return invalidRequest(`No such ${kind}: '${id}'`, { param, code: 'resource_missing', status });
}

/** A key reused for another request: Stripe's own error type, which the SDK raises as `StripeIdempotencyError`. */
export function idempotencyError(message: string): ApiError {
  return new ApiError(400, { type: 'idempotency_error', message });
}
