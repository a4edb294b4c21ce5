/** GET /api/v1/transactions: newest first, paged and filtered (decisions.md §9); a partner key sees its own. */
import { httpRoute } from '../lib/adapters/http-route';
import { presentPage, presentTransaction } from '../lib/http/presenters';
import { TransactionPage } from '../lib/http/response-schemas';
import type { RouteDoc } from '../lib/http/route-doc';
import { toTransactionFilters, TransactionListQuery } from '../lib/http/transaction-schemas';
import { transactionStoreDeps } from '../lib/adapters/transaction-store';
import { listTransactionsFor } from '../lib/use-cases/transactions';

const doc: RouteDoc = {
  summary: 'List transactions',
  description:
    'Transactions newest first, paged with `limit` and `cursor` (pass the previous page\'s `next_cursor` with the same filters; an altered cursor, or ' +
    "one from another query or partner, is 400 VALIDATION_ERROR). Filters combine: `status`, `client_id`, `partner_reference`, and the inclusive " +
    "`created_from`/`created_to` range. A partner key lists its own partner's transactions; a platform key lists every partner's, or one partner's with " +
    '`partner_id`.',
  tag: 'Transactions',
  responses: {
    200: { description: 'One page of transactions, newest first', schema: TransactionPage },
  },
  errors: [],
};

export const handler = httpRoute({ access: 'partner-read', query: TransactionListQuery, doc }, async ({ caller, query }) => {
  const page = await listTransactionsFor(transactionStoreDeps, caller, query.partner_id, toTransactionFilters(query), { limit: query.limit, cursor: query.cursor });
  return { status: 200, body: presentPage(page, presentTransaction) };
});
