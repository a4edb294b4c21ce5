/** GET /api/v1/transactions: newest first, paged and filtered (decisions.md §9); a partner key sees its own. */
import { httpRoute } from '../lib/http/chain';
import { presentPage, presentTransaction } from '../lib/http/presenters';
import { TransactionListQuery } from '../lib/http/transaction-schemas';
import { transactionStoreDeps } from '../lib/adapters/transaction-store';
import { listTransactionsFor } from '../lib/use-cases/transactions';

export const handler = httpRoute({ access: 'partner-read', query: TransactionListQuery }, async ({ caller, query }) => {
  const page = await listTransactionsFor(
    transactionStoreDeps,
    caller,
    query.partner_id,
    {
      status: query.status,
      clientId: query.client_id,
      partnerReference: query.partner_reference,
      createdFrom: query.created_from,
      createdTo: query.created_to,
    },
    { limit: query.limit, cursor: query.cursor },
  );
  return { status: 200, body: presentPage(page, presentTransaction) };
});
