import { ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from '@jest/globals';
import { errors, ServiceError } from '../../../lib/domain/errors';
import { errorResult as mapError } from '../../../lib/http/response';
import { isDependencyUnavailable } from '../../../lib/store/dynamo';

/** The mapping as the chain does it: with the table's own judgement of which of its errors mean it is down. */
const errorResult = (error: unknown) => mapError(error, isDependencyUnavailable);

/**
 * The statuses the spec fixes, row by row from its tables: interface-spec.md (Errors, Authentication) and
 * decisions.md §2 (admin) and §3 (codes the interface spec leaves without a status). Codes the service adds on
 * its own (docs/conventions.md) have no status but the one the code gives them, so they are not listed here.
 */
const specified: Array<[ServiceError, number, string]> = [
  [errors.validation({ fieldErrors: { a: ['bad'] }, formErrors: [] }), 400, 'VALIDATION_ERROR'],
  [errors.idempotencyKeyMissing(), 400, 'IDEMPOTENCY_KEY_MISSING'],
  [errors.clientFeeBelowSvcFee(1.5), 400, 'CLIENT_FEE_BELOW_SVC_FEE'],
  [errors.apiKeyMissing(), 401, 'API_KEY_MISSING'],
  [errors.apiKeyInvalid(), 401, 'API_KEY_INVALID'],
  [errors.hmacMissing(), 401, 'HMAC_MISSING'],
  [errors.hmacInvalid(), 401, 'HMAC_INVALID'],
  [errors.apiKeyScopeForbidden(), 403, 'API_KEY_SCOPE_FORBIDDEN'],
  [errors.partnerNotActive(), 403, 'PARTNER_NOT_ACTIVE'],
  [errors.partnerSuspended(), 403, 'PARTNER_SUSPENDED'],
  [errors.clientNotFound(), 404, 'CLIENT_NOT_FOUND'],
  [errors.txNotFound(), 404, 'TX_NOT_FOUND'],
  [errors.partnerNotFound(), 404, 'PARTNER_NOT_FOUND'],
  [errors.batchNotFound(), 404, 'BATCH_NOT_FOUND'],
  [errors.clientExists(), 409, 'CLIENT_EXISTS'],
  [errors.batchAlreadyPaid(), 409, 'BATCH_ALREADY_PAID'],
  [errors.payoutFailed(), 502, 'PAYOUT_FAILED'],
  [errors.processorKeyMissing(), 500, 'PROCESSOR_KEY_MISSING'],
  [errors.processorPublishableMissing(), 500, 'PROCESSOR_PUBLISHABLE_MISSING'],
  [errors.rateLimited(30), 429, 'RATE_LIMITED'],
  // decisions.md §2
  [errors.adminTokenInvalid(), 401, 'ADMIN_TOKEN_INVALID'],
  [errors.adminForbidden(), 403, 'ADMIN_FORBIDDEN'],
  // decisions.md §3
  [errors.kycNotApproved(), 403, 'KYC_NOT_APPROVED'],
  [errors.clientNotActive(), 403, 'CLIENT_NOT_ACTIVE'],
  [errors.processorSignatureMissing(), 400, 'PROCESSOR_SIGNATURE_MISSING'],
  [errors.processorSignatureInvalid(), 400, 'PROCESSOR_SIGNATURE_INVALID'],
  [errors.invalidWebhookJson(), 400, 'INVALID_WEBHOOK_JSON'],
  [errors.missingIntentId(), 400, 'MISSING_INTENT_ID'],
  [errors.paymentIntentNotFound(), 404, 'PAYMENT_INTENT_NOT_FOUND'],
  [errors.idempotencyKeyReused(), 422, 'IDEMPOTENCY_KEY_REUSED'],
  [errors.idempotencyKeyInUse(2), 409, 'IDEMPOTENCY_KEY_IN_USE'],
  [errors.batchPayoutInProgress(), 409, 'BATCH_PAYOUT_IN_PROGRESS'],
  [errors.notFound(), 404, 'NOT_FOUND'],
  [errors.methodNotAllowed(['GET']), 405, 'METHOD_NOT_ALLOWED'],
];

describe('domain errors', () => {
  it.each(specified)('%s answers its specified status and code in the spec body', (error, status, code) => {
    const result = errorResult(error);

    expect(result.status).toBe(status);
    expect(result.body).toEqual({
      code,
      error: status < 500 || error.expose ? error.message : 'The service could not complete the request',
      ...(code === 'VALIDATION_ERROR' ? { details: { fieldErrors: { a: ['bad'] }, formErrors: [] } } : {}),
    });
  });

  it('carries Retry-After on 409 IDEMPOTENCY_KEY_IN_USE and 429, rounded up to whole seconds, at least 1', () => {
    expect(errorResult(errors.idempotencyKeyInUse(0.2)).headers).toEqual({ 'Retry-After': '1' });
    expect(errorResult(errors.rateLimited(12.1)).headers).toEqual({ 'Retry-After': '13' });
  });

  it('shows the message of a 4xx and of the named 5xx codes, and a generic one for other 5xx', () => {
    const internal = new ServiceError(503, 'SOMETHING_INTERNAL', 'db host 10.0.0.5 unreachable');

    expect(errorResult(errors.clientExists()).body).toMatchObject({ error: expect.stringContaining('client_id') });
    expect(errorResult(errors.processorKeyMissing()).body).toMatchObject({ error: expect.stringContaining('secret key') });
    expect(JSON.stringify(errorResult(internal).body)).not.toContain('10.0.0.5');
  });

  it('answers anything that is not a ServiceError with a generic 500', () => {
    expect(errorResult(new TypeError('x is undefined'))).toEqual({ status: 500, body: { error: 'Internal server error', code: 'INTERNAL_ERROR' } });
    expect(errorResult('a string')).toEqual({ status: 500, body: { error: 'Internal server error', code: 'INTERNAL_ERROR' } });
  });

  it('answers a dependency that is down or shedding load with 503 SERVICE_UNAVAILABLE and Retry-After, never its detail', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8000'), { code: 'ECONNREFUSED' });
    const throttled = new ProvisionedThroughputExceededException({ message: 'Rate of requests exceeds the allowed throughput', $metadata: {} });
    // What the SDK's HTTP handler throws when no connection opens within `connectionTimeout`: a name, no code.
    const noConnection = Object.assign(
      new Error('@smithy/node-http-handler - the request socket did not establish a connection with the server within the configured timeout of 2000 ms.'),
      { name: 'TimeoutError' },
    );

    for (const error of [refused, throttled, noConnection]) {
      expect(errorResult(error)).toEqual({
        status: 503,
        body: { error: expect.not.stringContaining('127.0.0.1'), code: 'SERVICE_UNAVAILABLE' },
        headers: { 'Retry-After': '1' },
      });
    }
  });
});
