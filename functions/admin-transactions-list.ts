/** GET /api/v1/admin/transactions: every partner's transactions, newest first, filtered and paged (the admin search). */
import { transactionStoreDeps } from '../lib/adapters/transaction-store';
import { httpRoute } from '../lib/adapters/http-route';
import { presentPage, presentTransaction } from '../lib/http/presenters';
import { TransactionPage } from '../lib/http/response-schemas';
import type { RouteDoc } from '../lib/http/route-doc';
import { AdminTransactionListQuery, toTransactionFilters } from '../lib/http/transaction-schemas';
import { listTransactionsFor } from '../lib/use-cases/transactions';

const doc: RouteDoc = {
  summary: 'Search transactions',
  description:
    "Every partner's transactions, newest first, as `GET /transactions` lists them for a platform key: paged with `limit` and `cursor` (the previous " +
    "page's `next_cursor` with the same filters; an altered cursor, or one from another query, is 400 VALIDATION_ERROR), filtered by `partner_id`, " +
    '`client_id`, `status`, `partner_reference` and the inclusive `created_from`/`created_to` range, all combined. `svc_tx_id` finds one ' +
    'transaction by its id (a page of at most one item).',
  tag: 'Admin: transactions & settlements',
  responses: {
    200: { description: 'One page of transactions, newest first', schema: TransactionPage },
  },
  errors: [],
};

export const handler = httpRoute({ access: 'admin', query: AdminTransactionListQuery, doc }, async ({ caller, query }) => {
  const page = await listTransactionsFor(transactionStoreDeps, caller, query.partner_id, toTransactionFilters(query), { limit: query.limit, cursor: query.cursor });
  return { status: 200, body: presentPage(page, presentTransaction) };
});
