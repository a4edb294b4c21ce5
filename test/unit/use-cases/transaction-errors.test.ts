/**
 * How the transaction use cases answer what their ports refuse, with the ports faked: the store's
 * IntentAlreadyLinked (an intent belongs to one transaction) on checkout and on attach-intent, and the processor's
 * ProcessorRefusedParameter (a value the partner chose that the processor will not take). Each is pinned to the
 * exact body the partner receives, as the chain's error mapper writes it: these answers are the API's, and a
 * port's error must never leak its own words or field names into them.
 */
import { describe, expect, it } from '@jest/globals';
import type { Caller, IdempotencyScope } from '../../../lib/domain/caller';
import { ServiceError } from '../../../lib/domain/errors';
import { NO_REVERSALS } from '../../../lib/domain/ledger';
import { currencyCode } from '../../../lib/domain/money';
import type { Client, Partner } from '../../../lib/domain/partner';
import type { Transaction } from '../../../lib/domain/transaction';
import { errorResult } from '../../../lib/http/response';
import { type PaymentIntent, type PaymentParameter, type Processor, ProcessorRefusedParameter } from '../../../lib/use-cases/ports/processor';
import { IntentAlreadyLinked, type TransactionStore } from '../../../lib/use-cases/ports/transaction-store';
import { attachIntent, createCheckoutIntent, type NewCheckout, type TransactionDeps } from '../../../lib/use-cases/transactions';

const NOW = '2026-11-27T12:00:00.000Z';
const partner: Partner = { partnerId: 'ptr_1', name: 'P', status: 'active', kycStatus: 'approved', serviceFeePercentage: 1, rateLimitPerMinute: null, branding: null, createdAt: NOW, updatedAt: NOW };
const client: Client = { id: 'cl_1', partnerId: 'ptr_1', clientId: 'merchant-1', legalName: 'M', status: 'active', partnerFeePercentage: null, partnerFeeFlatUsdCents: null, createdAt: NOW, updatedAt: NOW };
const caller: Caller = { kind: 'partner', keyId: 'key_1', partner };
const attempt: IdempotencyScope = { owner: 'ptr_1', endpoint: 'POST /api/v1/transactions/checkout-intent', idempotencyKey: 'k-1', fingerprint: 'f', nonce: 'n' };
const checkout: NewCheckout = {
  partnerId: 'ptr_1',
  clientId: 'merchant-1',
  amountMinor: 1500,
  currency: currencyCode('USD'),
  partnerReference: 'order-1',
  meta: undefined,
  email: 'buyer@example.com',
  statementDescriptorSuffix: undefined,
};

const initialized: Transaction = {
  id: 'rec_1', svcTxId: 'svc_tx_1', partnerId: 'ptr_1', partnerName: 'P', clientId: 'merchant-1', clientName: 'M', partnerReference: 'order-1',
  processorPaymentIntentId: null, amountMinor: 1500, currency: currencyCode('USD'), status: 'initialized', settlementStatus: 'unsettled', fees: null,
  reversals: NO_REVERSALS, revision: 0, receiptEmail: null, statementDescriptorSuffix: null, meta: null, createdAt: NOW, updatedAt: NOW,
};

const intent = (id: string): PaymentIntent => ({
  id, status: 'requires_payment_method', amountMinor: 1500, currency: currencyCode('USD'), clientSecret: `${id}_secret`, metadata: {}, outcomeEvent: undefined,
});

const unused = async (): Promise<never> => {
  throw new Error('not called in this test');
};

/** Ports that answer as a healthy world would, with `overrides` in place: the one refusal a test is about. */
function depsWith(overrides: { transactions?: Partial<TransactionStore>; processor?: Partial<Processor> }): TransactionDeps {
  return {
    processor: {
      publishableKey: async () => 'pk_test',
      createPaymentIntent: async () => intent('pi_new00000000'),
      retrievePaymentIntent: async (id) => intent(id),
      cancelPaymentIntent: unused,
      verifyEvent: unused,
      ...overrides.processor,
    },
    transactions: {
      createTransaction: async (tx) => tx,
      getTransaction: async (svcTxId) => (svcTxId === initialized.svcTxId ? initialized : undefined),
      attachPaymentIntent: async () => undefined,
      listTransactions: unused,
      withSettlementStatus: async (transactions) => transactions,
      ...overrides.transactions,
    },
    clients: { getClient: async () => client },
    payees: { getPayee: async () => ({ partner, client }) },
    paymentEvents: {} as TransactionDeps['paymentEvents'],
  };
}

/** The refusal a promise rejects with, and the exact body the chain answers it with. */
async function answerTo(promise: Promise<unknown>): Promise<{ error: unknown; status: number; body: string }> {
  const error = await promise.then(
    () => undefined,
    (refusal: unknown) => refusal,
  );
  const result = errorResult(error, () => false);
  return { error, status: result.status, body: JSON.stringify(result.body) };
}

const ALREADY_LINKED_BODY =
  '{"error":"Payment intent already linked","code":"VALIDATION_ERROR","details":{"fieldErrors":{"processor_payment_intent_id":["This payment intent is already linked to another transaction"]},"formErrors":[]}}';

describe('an intent the store finds linked to another transaction (IntentAlreadyLinked)', () => {
  const linked = async (): Promise<never> => Promise.reject(new IntentAlreadyLinked());

  it.each([
    ['checkout', () => createCheckoutIntent(depsWith({ transactions: { createTransaction: linked } }), caller, checkout, attempt)],
    [
      'attach-intent',
      () => attachIntent(depsWith({ transactions: { attachPaymentIntent: linked } }), caller, { svcTxId: initialized.svcTxId, paymentIntentId: 'pi_taken0000000' }),
    ],
  ])('is 400 VALIDATION_ERROR on processor_payment_intent_id at %s', async (_path, run) => {
    // Act
    const answer = await answerTo(run());

    // Assert
    expect(answer.error).toBeInstanceOf(ServiceError);
    expect(answer.error).toMatchObject({
      status: 400,
      code: 'VALIDATION_ERROR',
      message: 'Payment intent already linked',
      details: { fieldErrors: { processor_payment_intent_id: ['This payment intent is already linked to another transaction'] }, formErrors: [] },
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toBe(ALREADY_LINKED_BODY);
  });
});

describe("a value the processor will not take (ProcessorRefusedParameter) is the partner's 400, on the field it came from", () => {
  const refusing = (refusal: ProcessorRefusedParameter) => depsWith({ processor: { createPaymentIntent: async () => Promise.reject(refusal) } });
  const fieldBody = (field: string, message: string, summary: string) =>
    JSON.stringify({ error: summary, code: 'VALIDATION_ERROR', details: { fieldErrors: { [field]: [message] }, formErrors: [] } });

  it.each<[PaymentParameter, string]>([
    ['amount', 'amount'],
    ['currency', 'currency'],
    ['receiptEmail', 'email'],
    ['statementDescriptorSuffix', 'statement_descriptor_suffix'],
    ['metadata.partner_reference', 'partner_reference'],
    ['metadata.partner_id', 'partner_id'],
    ['metadata.client_id', 'client_id'],
    ['paymentIntentId', 'processor_payment_intent_id'],
  ])('the processor refusing %s answers on the request field %s, quoting the processor', async (parameter, field) => {
    const answer = await answerTo(createCheckoutIntent(refusing(new ProcessorRefusedParameter(parameter, 'Invalid value', 'processor')), caller, checkout, attempt));

    expect(answer.status).toBe(400);
    expect(answer.body).toBe(fieldBody(field, 'Refused by the card processor: Invalid value', 'The card processor refused the request'));
  });

  it('the processor refusing a payment value without naming it answers on the form', async () => {
    const answer = await answerTo(createCheckoutIntent(refusing(new ProcessorRefusedParameter(undefined, 'Amount must be at least $0.50 usd', 'processor')), caller, checkout, attempt));

    expect(answer.status).toBe(400);
    expect(answer.body).toBe(
      '{"error":"Refused by the card processor: Amount must be at least $0.50 usd","code":"VALIDATION_ERROR","details":{"fieldErrors":{},"formErrors":["Refused by the card processor: Amount must be at least $0.50 usd"]}}',
    );
  });

  it('an amount the adapter cannot express at the processor answers on amount in its own words', async () => {
    const reason = 'The card processor takes MGA amounts with at most 0 decimal places';

    const answer = await answerTo(createCheckoutIntent(refusing(new ProcessorRefusedParameter('amount', reason, 'adapter')), caller, checkout, attempt));

    expect(answer.status).toBe(400);
    expect(answer.body).toBe(fieldBody('amount', reason, reason));
  });

  it('at attach-intent, the processor refusing the intent id answers on processor_payment_intent_id', async () => {
    const deps = depsWith({ processor: { retrievePaymentIntent: async () => Promise.reject(new ProcessorRefusedParameter('paymentIntentId', 'No such intent form', 'processor')) } });

    const answer = await answerTo(attachIntent(deps, caller, { svcTxId: initialized.svcTxId, paymentIntentId: 'pi_refused00000' }));

    expect(answer.status).toBe(400);
    expect(answer.body).toBe(fieldBody('processor_payment_intent_id', 'Refused by the card processor: No such intent form', 'The card processor refused the request'));
  });

  it('any other processor failure is not turned into a 400', async () => {
    const deps = depsWith({ processor: { createPaymentIntent: async () => Promise.reject(new Error('socket hang up')) } });

    const answer = await answerTo(createCheckoutIntent(deps, caller, checkout, attempt));

    expect(answer.status).toBe(500);
  });
});
