/** GET /api/v1/transactions: newest first, paged and filtered (decisions.md §9); a partner key sees its own. */
import { httpRoute } from '../lib/composition/http-route';
import { presentPage, presentTransaction } from '../lib/http/presenters';
import { toTransactionFilters, TransactionListQuery } from '../lib/http/transaction-schemas';
import { transactionStoreDeps } from '../lib/composition/transaction-store';
import { listTransactionsFor } from '../lib/use-cases/transactions';
import { listTransactionsDoc } from '../lib/http/route-docs/transactions';

export const handler = httpRoute({ access: 'partner-read', query: TransactionListQuery, doc: listTransactionsDoc }, async ({ caller, query }) => {
  const page = await listTransactionsFor(transactionStoreDeps, caller, query.partner_id, toTransactionFilters(query), { limit: query.limit, cursor: query.cursor });
  return { status: 200, body: presentPage(page, presentTransaction) };
});
