/** POST /api/v1/transactions/initialize (legacy): the transaction only; the intent is attached later. */
import { httpRoute } from '../lib/http/chain';
import { InitializeBody } from '../lib/http/transaction-schemas';
import { transactionStoreDeps } from '../lib/adapters/transaction-store';
import { initializeTransaction } from '../lib/use-cases/transactions';

export const handler = httpRoute({ access: 'partner-mutation', body: InitializeBody }, async ({ caller, body, idempotency }) => {
  const transaction = await initializeTransaction(transactionStoreDeps, caller, {
    partnerId: body.partner_id,
    clientId: body.client_id,
    amountMinor: body.amountMinor,
    currency: body.currency,
    partnerReference: body.partner_reference,
    meta: body.meta,
  }, idempotency);
  return { status: 201, body: { svc_tx_id: transaction.svcTxId, status: transaction.status } };
});
