/** GET /api/v1/admin/transactions/{svc_tx_id}: one transaction of any partner. */
import { transactionStoreDeps } from '../lib/adapters/transaction-store';
import { httpRoute } from '../lib/adapters/http-route';
import { presentTransaction } from '../lib/http/presenters';
import { Transaction } from '../lib/http/response-schemas';
import type { RouteDoc } from '../lib/http/route-doc';
import { TransactionParams } from '../lib/http/transaction-schemas';
import { getTransactionFor } from '../lib/use-cases/transactions';

const doc: RouteDoc = {
  summary: 'Get a transaction',
  description: 'One transaction of any partner by its `svc_tx_id`, as `GET /transactions/{svc_tx_id}` reads it. Fee fields are null until the payment succeeds.',
  tag: 'Admin: transactions & settlements',
  responses: {
    200: { description: 'The transaction', schema: Transaction },
  },
  errors: ['TX_NOT_FOUND'],
};

export const handler = httpRoute({ access: 'admin', params: TransactionParams, doc }, async ({ caller, params }) => ({
  status: 200,
  body: presentTransaction(await getTransactionFor(transactionStoreDeps, caller, params.svc_tx_id)),
}));
