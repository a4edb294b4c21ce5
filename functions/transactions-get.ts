/** GET /api/v1/transactions/{svc_tx_id}: one transaction (the reconcile-by-svc_tx_id read of the frontend rules). */
import { httpRoute } from '../lib/composition/http-route';
import { presentTransaction } from '../lib/http/presenters';
import { TransactionParams } from '../lib/http/transaction-schemas';
import { transactionStoreDeps } from '../lib/composition/transaction-store';
import { getTransactionFor } from '../lib/use-cases/transactions';
import { getTransactionDoc } from '../lib/http/route-docs/transactions';

export const handler = httpRoute({ access: 'partner-read', params: TransactionParams, doc: getTransactionDoc }, async ({ caller, params }) => ({
  status: 200,
  body: presentTransaction(await getTransactionFor(transactionStoreDeps, caller, params.svc_tx_id)),
}));
