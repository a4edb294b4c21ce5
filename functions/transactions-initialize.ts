/** POST /api/v1/transactions/initialize (legacy): the transaction only; the intent is attached later. */
import { httpRoute } from '../lib/adapters/http-route';
import { InitializedTransaction } from '../lib/http/response-schemas';
import { PAYMENT_GATE_ERRORS, type RouteDoc } from '../lib/http/route-doc';
import { InitializeBody } from '../lib/http/transaction-schemas';
import { transactionStoreDeps } from '../lib/adapters/transaction-store';
import type { Transaction } from '../lib/domain/transaction';
import { initializeTransaction, withKnownPayee } from '../lib/use-cases/transactions';

const doc: RouteDoc = {
  summary: 'Initialize a transaction (legacy two-step flow)',
  description:
    'Step 1 of the legacy flow: creates only the transaction (`initialized`), with no payment intent and no statement descriptor; attach an intent ' +
    'you created at the processor with `POST /transactions/attach-intent`. The same partner and client checks as checkout-intent: a partner key names ' +
    'only its own partner (403 API_KEY_SCOPE_FORBIDDEN); the partner exists, is active and its KYC approved; the client exists under that partner and ' +
    'is active. Use `init-<partner_reference>` as the idempotency key.',
  tag: 'Transactions',
  responses: {
    201: { description: 'The initialized transaction', schema: InitializedTransaction },
  },
  errors: PAYMENT_GATE_ERRORS,
  example: {
    partner_id: 'ptr_0f3k9m2p7q8r1s4t5v6w7x8y',
    client_id: 'merchant-001',
    amount: 49.99,
    currency: 'USD',
    partner_reference: 'order-8842',
    meta: { cart: 'c-2' },
  },
};

const present = (transaction: Transaction) => ({ svc_tx_id: transaction.svcTxId, status: transaction.status });

export const handler = httpRoute({ access: 'partner-mutation', body: InitializeBody, prefetchPayee: true, doc }, async ({ caller, body, idempotency, payee }) => {
  const input = {
    partnerId: body.partner_id,
    clientId: body.client_id,
    amountMinor: body.amountMinor,
    currency: body.currency,
    partnerReference: body.partner_reference,
    meta: body.meta,
  };
  const answer = (created: Transaction) => idempotency.answer(201, present(created));
  const transaction = await initializeTransaction(withKnownPayee(transactionStoreDeps, payee), caller, input, idempotency, answer);
  return { status: 201, body: present(transaction) };
});
