/** GET /api/v1/transactions/{svc_tx_id}: one transaction (the reconcile-by-svc_tx_id read of the frontend rules). */
import { httpRoute } from '../lib/adapters/http-route';
import { presentTransaction } from '../lib/http/presenters';
import { Transaction } from '../lib/http/response-schemas';
import type { RouteDoc } from '../lib/http/route-doc';
import { TransactionParams } from '../lib/http/transaction-schemas';
import { transactionStoreDeps } from '../lib/adapters/transaction-store';
import { getTransactionFor } from '../lib/use-cases/transactions';

const doc: RouteDoc = {
  summary: 'Get a transaction',
  description:
    'One transaction by its `svc_tx_id`: reconcile the outcome of a checkout here (and with the partner webhooks) from your backend, never from the ' +
    "frontend's success callback alone. A partner key reads its own partner's transactions only (another partner's is 404 TX_NOT_FOUND); a platform " +
    'key reads any. Fee fields are null until the payment succeeds.',
  tag: 'Transactions',
  responses: {
    200: { description: 'The transaction', schema: Transaction },
  },
  errors: ['PARTNER_NOT_FOUND', 'TX_NOT_FOUND'],
};

export const handler = httpRoute({ access: 'partner-read', params: TransactionParams, doc }, async ({ caller, params }) => ({
  status: 200,
  body: presentTransaction(await getTransactionFor(transactionStoreDeps, caller, params.svc_tx_id)),
}));
