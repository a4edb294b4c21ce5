/** GET /api/v1/admin/transactions/{svc_tx_id}: one transaction of any partner. */
import { transactionStoreDeps } from '../lib/composition/transaction-store';
import { httpRoute } from '../lib/composition/http-route';
import { presentTransaction } from '../lib/http/presenters';
import { TransactionParams } from '../lib/http/transaction-schemas';
import { getTransactionFor } from '../lib/use-cases/transactions';
import { adminGetTransactionDoc } from '../lib/http/route-docs/admin-transactions-settlements';

export const handler = httpRoute({ access: 'admin', params: TransactionParams, doc: adminGetTransactionDoc }, async ({ caller, params }) => ({
  status: 200,
  body: presentTransaction(await getTransactionFor(transactionStoreDeps, caller, params.svc_tx_id)),
}));
