/**
 * Domain errors: one {@link ServiceError} class carrying the spec's `code` and HTTP `status`, and one factory
 * per code of interface-spec.md (Errors, Authentication) and decisions.md §3. Pure: no I/O, no HTTP types.
 * `lib/http/response.ts` is the one place that turns them into response bodies.
 */

/** Field-level detail of a VALIDATION_ERROR, exactly the shape of zod's flattened error (spec: Errors). */
export interface ValidationDetails {
  fieldErrors: Record<string, string[]>;
  formErrors: string[];
}

export interface ServiceErrorOptions {
  /** Extra response headers the error requires (`Retry-After` on 409/429). */
  headers?: Record<string, string>;
  details?: ValidationDetails;
  /** Show the message to the caller; defaults to `status < 500`. Set only for fixed, secret-free texts. */
  expose?: boolean;
  cause?: unknown;
}

export class ServiceError extends Error {
  override readonly name = 'ServiceError';
  readonly code: string;
  readonly status: number;
  /** Whether the message may be shown to the caller; a 5xx message is replaced by a generic one. */
  readonly expose: boolean;
  readonly headers: Record<string, string>;
  readonly details: ValidationDetails | undefined;

  constructor(status: number, code: string, message: string, options: ServiceErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = status;
    this.code = code;
    this.expose = options.expose ?? status < 500;
    this.headers = options.headers ?? {};
    this.details = options.details;
  }
}

const retryAfter = (seconds: number) => ({ 'Retry-After': String(Math.max(1, Math.ceil(seconds))) });

/** Every error the service answers with, by spec code. Each returns a fresh {@link ServiceError}. */
export const errors = {
  validation: (details: ValidationDetails, message = 'Request validation failed') =>
    new ServiceError(400, 'VALIDATION_ERROR', message, { details }),
  idempotencyKeyMissing: () => new ServiceError(400, 'IDEMPOTENCY_KEY_MISSING', 'The idempotency-key header is required'),
  clientFeeBelowSvcFee: (minimum: number) =>
    new ServiceError(
      400,
      'CLIENT_FEE_BELOW_SVC_FEE',
      `partner_fee_percentage must not be below the partner's service fee percentage (${minimum})`,
    ),

  apiKeyMissing: () => new ServiceError(401, 'API_KEY_MISSING', 'The x-api-key header is required'),
  apiKeyInvalid: () => new ServiceError(401, 'API_KEY_INVALID', 'The API key is not valid'),
  hmacMissing: () => new ServiceError(401, 'HMAC_MISSING', 'The x-svc-hmac header is required'),
  hmacInvalid: () => new ServiceError(401, 'HMAC_INVALID', 'The x-svc-hmac signature does not match the request body'),
  adminTokenInvalid: () => new ServiceError(401, 'ADMIN_TOKEN_INVALID', 'A valid admin bearer token is required'),

  apiKeyScopeForbidden: (message = 'This API key is not allowed to act for this partner') =>
    new ServiceError(403, 'API_KEY_SCOPE_FORBIDDEN', message),
  adminForbidden: () => new ServiceError(403, 'ADMIN_FORBIDDEN', 'The admin token lacks the admin role'),
  partnerNotActive: () => new ServiceError(403, 'PARTNER_NOT_ACTIVE', 'The partner is not active'),
  partnerSuspended: () => new ServiceError(403, 'PARTNER_SUSPENDED', 'The partner is suspended'),
  kycNotApproved: () => new ServiceError(403, 'KYC_NOT_APPROVED', "The partner's KYC is not approved"),
  clientNotActive: () => new ServiceError(403, 'CLIENT_NOT_ACTIVE', 'The client is not active'),

  notFound: (message = 'No route matches this path') => new ServiceError(404, 'NOT_FOUND', message),
  partnerNotFound: () => new ServiceError(404, 'PARTNER_NOT_FOUND', 'Partner not found'),
  clientNotFound: () => new ServiceError(404, 'CLIENT_NOT_FOUND', 'Client not found'),
  txNotFound: () => new ServiceError(404, 'TX_NOT_FOUND', 'Transaction not found'),
  batchNotFound: () => new ServiceError(404, 'BATCH_NOT_FOUND', 'Settlement batch not found'),
  apiKeyNotFound: () => new ServiceError(404, 'API_KEY_NOT_FOUND', 'API key not found'),
  webhookEndpointNotFound: () => new ServiceError(404, 'WEBHOOK_ENDPOINT_NOT_FOUND', 'Webhook endpoint not found'),
  webhookDeliveryNotFound: () => new ServiceError(404, 'WEBHOOK_DELIVERY_NOT_FOUND', 'Webhook delivery not found'),
  paymentIntentNotFound: () =>
    new ServiceError(404, 'PAYMENT_INTENT_NOT_FOUND', 'No transaction is linked to this payment intent'),

  methodNotAllowed: (allowed: readonly string[]) =>
    new ServiceError(405, 'METHOD_NOT_ALLOWED', 'Method not allowed on this path', {
      headers: { Allow: allowed.join(', ') },
    }),

  txNotInitialized: () =>
    new ServiceError(409, 'TX_NOT_INITIALIZED', 'The transaction already has a payment intent (it is no longer initialized)'),
  clientExists: () => new ServiceError(409, 'CLIENT_EXISTS', 'A client with this client_id already exists for the partner'),
  batchAlreadyPaid: () => new ServiceError(409, 'BATCH_ALREADY_PAID', 'The settlement batch has already been paid'),
  /** decisions.md §5a: no payout while the merchant owes (its waiting reversals exceed its waiting sales). */
  clientOwes: () =>
    new ServiceError(409, 'CLIENT_OWES', 'The merchant owes more in this currency than this batch pays (see GET /balances): the batch is held until its sales cover the difference'),
  webhookEndpointLimitReached: (max: number) =>
    new ServiceError(409, 'WEBHOOK_ENDPOINT_LIMIT_REACHED', `A partner has at most ${max} webhook endpoints: delete one first`),
  webhookEndpointDeleted: () =>
    new ServiceError(409, 'WEBHOOK_ENDPOINT_DELETED', "The delivery's webhook endpoint has been deleted: there is nowhere to resend it"),
  batchPayoutInProgress: () =>
    new ServiceError(409, 'BATCH_PAYOUT_IN_PROGRESS', 'A payout of this settlement batch is already running'),
  idempotencyKeyInUse: (retryAfterSeconds: number) =>
    new ServiceError(409, 'IDEMPOTENCY_KEY_IN_USE', 'A request with this idempotency key is still being processed', {
      headers: retryAfter(retryAfterSeconds),
    }),

  /** The raw body is over the route's limit (`maxBodyBytes`): refused before it is parsed, as a caller error. */
  payloadTooLarge: (maxBytes: number) =>
    new ServiceError(413, 'PAYLOAD_TOO_LARGE', `Request body too large: this route takes at most ${maxBytes} bytes`),

  idempotencyKeyReused: () =>
    new ServiceError(
      422,
      'IDEMPOTENCY_KEY_REUSED',
      'This idempotency key was already used with a different request body',
    ),

  rateLimited: (retryAfterSeconds: number) =>
    new ServiceError(429, 'RATE_LIMITED', 'Rate limit exceeded', { headers: retryAfter(retryAfterSeconds) }),

  processorKeyMissing: () =>
    new ServiceError(500, 'PROCESSOR_KEY_MISSING', "The service's processor secret key is not configured", {
      expose: true,
    }),
  processorPublishableMissing: () =>
    new ServiceError(500, 'PROCESSOR_PUBLISHABLE_MISSING', "The service's processor publishable key is not configured", {
      expose: true,
    }),

  processorWebhookSecretMissing: () =>
    new ServiceError(500, 'PROCESSOR_WEBHOOK_SECRET_MISSING', "The service's processor webhook secret is not configured", {
      expose: true,
    }),

  /** Too many concurrent writes on the same items for now (a settlement run that could write nothing). */
  contended: () =>
    new ServiceError(503, 'SERVICE_UNAVAILABLE', 'Too many concurrent writes on the same records; retry shortly', {
      expose: true,
      headers: retryAfter(1),
    }),
  requestTimedOut: () =>
    new ServiceError(503, 'REQUEST_TIMED_OUT', 'The request ran out of time; retry it with the same idempotency key', { expose: true, headers: retryAfter(1) }),
  processorIntentMissing: () =>
    new ServiceError(502, 'PROCESSOR_INTENT_MISSING', "The card processor no longer knows this transaction's payment intent", { expose: true }),
  processorUnavailable: (cause?: unknown) =>
    new ServiceError(502, 'PROCESSOR_UNAVAILABLE', 'The card processor is unavailable, retry later', { cause, expose: true }),
  payoutFailed: (cause?: unknown) =>
    new ServiceError(502, 'PAYOUT_FAILED', 'The payout provider failed', { cause, expose: true }),

  processorSignatureMissing: () =>
    new ServiceError(400, 'PROCESSOR_SIGNATURE_MISSING', 'The processor-signature header is required'),
  processorSignatureInvalid: () =>
    new ServiceError(400, 'PROCESSOR_SIGNATURE_INVALID', 'The processor signature is not valid'),
  invalidWebhookJson: () => new ServiceError(400, 'INVALID_WEBHOOK_JSON', 'The webhook body is not a JSON event'),
  missingIntentId: () => new ServiceError(400, 'MISSING_INTENT_ID', 'The event carries no payment intent id'),
} as const;

/** A validation error with a single form-level message (malformed JSON). */
export const formValidationError = (message: string) => errors.validation({ fieldErrors: {}, formErrors: [message] }, message);

/** A validation error on one field (a header, a query parameter, a value the processor refused). */
export const fieldValidationError = (field: string, message: string, summary = message) =>
  errors.validation({ fieldErrors: { [field]: [message] }, formErrors: [] }, summary);
