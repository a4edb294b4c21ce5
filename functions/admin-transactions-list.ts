/** GET /api/v1/admin/transactions: every partner's transactions, newest first, filtered and paged (the admin search). */
import { transactionStoreDeps } from '../lib/composition/transaction-store';
import { httpRoute } from '../lib/composition/http-route';
import { presentPage, presentTransaction } from '../lib/http/presenters';
import { AdminTransactionListQuery, toTransactionFilters } from '../lib/http/transaction-schemas';
import { listTransactionsFor } from '../lib/use-cases/transactions';
import { adminSearchTransactionsDoc } from '../lib/http/route-docs/admin-transactions-settlements';

export const handler = httpRoute({ access: 'admin', query: AdminTransactionListQuery, doc: adminSearchTransactionsDoc }, async ({ caller, query }) => {
  const page = await listTransactionsFor(transactionStoreDeps, caller, query.partner_id, toTransactionFilters(query), { limit: query.limit, cursor: query.cursor });
  return { status: 200, body: presentPage(page, presentTransaction) };
});
