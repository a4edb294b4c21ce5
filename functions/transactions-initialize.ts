/** POST /api/v1/transactions/initialize (legacy): the transaction only; the intent is attached later. */
import { httpRoute } from '../lib/composition/http-route';
import { InitializeBody } from '../lib/http/transaction-schemas';
import { transactionStoreDeps } from '../lib/composition/transaction-store';
import type { Transaction } from '../lib/domain/transaction';
import { initializeTransaction, withKnownPayee } from '../lib/use-cases/transactions';
import { initializeTransactionDoc } from '../lib/http/route-docs/transactions';

const present = (transaction: Transaction) => ({ svc_tx_id: transaction.svcTxId, status: transaction.status });

export const handler = httpRoute({ access: 'partner-mutation', body: InitializeBody, prefetchPayee: true, doc: initializeTransactionDoc }, async ({ caller, body, idempotency, payee }) => {
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
