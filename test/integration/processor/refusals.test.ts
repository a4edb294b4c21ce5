/**
 * How a refusal of the card processor crosses the port (decisions.md §3: no 500 for anything a caller sent): the
 * Stripe adapter, through the real stripe SDK, against a stand-in for Stripe that refuses every request with the
 * error a test sets. A value the partner chose comes out as the port's `ProcessorRefusedParameter`, naming it in
 * the port's terms (the use case answers it 400 VALIDATION_ERROR on the partner's field:
 * test/unit/use-cases/transaction-errors.test.ts); anything else stays the service's own failure.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { currencyCode } from '../../../lib/domain/money';
import { ServiceError } from '../../../lib/domain/errors';
import { createStripeProcessor } from '../../../lib/processor/stripe';
import { ProcessorRefusedParameter } from '../../../lib/use-cases/ports/processor';

let refusal: Record<string, unknown> = {};
/** The status the stand-in refuses with; Stripe's `invalid_request_error` unless a test sets another. */
let refusalStatus = 400;
let server: Server;
let processor: ReturnType<typeof createStripeProcessor>;

beforeAll(async () => {
  server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(refusalStatus, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { type: 'invalid_request_error', ...refusal } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  processor = createStripeProcessor({
    apiBase: `http://127.0.0.1:${port}`,
    loadKeys: async () => ({ secretKey: 'sk_test_refusals', publishableKey: 'pk_test_refusals', webhookSecret: undefined }),
  });
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const createIntent = () =>
  processor
    .createPaymentIntent({
      svcTxId: 'svc_tx_000000000000000000000001',
      amountMinor: 1234,
      currency: currencyCode('USD'),
      receiptEmail: 'buyer@example.com',
      statementDescriptorSuffix: 'ORDER 1',
      metadata: { svc_tx_id: 'svc_tx_000000000000000000000001', partner_id: 'ptr_1', client_id: 'merchant-1', partner_reference: 'order-1' },
    })
    .then(
      () => undefined,
      (error: unknown) => error,
    );

describe('a refusal of the card processor', () => {
  it.each([
    ['amount', 'amount'],
    ['currency', 'currency'],
    ['receipt_email', 'receiptEmail'],
    ['statement_descriptor_suffix', 'statementDescriptorSuffix'],
    ['metadata[partner_reference]', 'metadata.partner_reference'],
    ['metadata[partner_id]', 'metadata.partner_id'],
    ['metadata[client_id]', 'metadata.client_id'],
  ])('of the parameter %s is a ProcessorRefusedParameter naming %s, in the processor own words', async (param, parameter) => {
    refusal = { message: `Invalid ${param}`, param };

    const error = await createIntent();

    expect(error).toBeInstanceOf(ProcessorRefusedParameter);
    expect(error).toMatchObject({ parameter, message: `Invalid ${param}`, refusedBy: 'processor' });
  });

  it.each([
    ['amount_too_small'],
    ['amount_too_large'],
    ['email_invalid'],
  ])('with the code %s, about a value the partner chose, names no parameter when the processor names none', async (code) => {
    refusal = { message: 'Refused', code };

    const error = await createIntent();

    expect(error).toBeInstanceOf(ProcessorRefusedParameter);
    expect(error).toMatchObject({ parameter: undefined, message: 'Refused', refusedBy: 'processor' });
  });

  it.each([
    ['parameter_unknown', 'colour'],
    ['parameter_missing', 'automatic_payment_methods[enabled]'],
    [undefined, 'metadata[svc_tx_id]'],
    [undefined, 'metadata'],
    [undefined, undefined],
  ])('that is the service own mistake (code %s, param %s) stays a server error, not blamed on the partner', async (code, param) => {
    refusal = { message: 'Refused', ...(code === undefined ? {} : { code }), ...(param === undefined ? {} : { param }) };

    const error = await createIntent();

    expect(error).not.toBeInstanceOf(ServiceError);
    expect(error).not.toBeInstanceOf(ProcessorRefusedParameter);
    expect(error).toBeInstanceOf(Error);
  });

  it.each([
    ['a card error', 402, { type: 'card_error', code: 'card_declined', message: 'Your card was declined.' }],
    ['a rate limit', 429, { type: 'rate_limit_error', message: 'Too many requests' }],
    ['a failure of its own', 500, { type: 'api_error', message: 'Something went wrong' }],
  ])('that the request cannot fix (%s, %i) is 502 PROCESSOR_UNAVAILABLE: the partner retries with the same key', async (_name, status, error) => {
    refusalStatus = status;
    refusal = error;
    try {
      expect(await createIntent()).toMatchObject({ status: 502, code: 'PROCESSOR_UNAVAILABLE' });
    } finally {
      refusalStatus = 400;
    }
  }, 30_000);
});
