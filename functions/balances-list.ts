/** GET /api/v1/balances: what waits for settlement per merchant and currency, and what each owes (decisions.md §5a). */
import { balanceDeps } from '../lib/composition/balances';
import { BalanceListQuery, toBalanceFilters } from '../lib/http/balance-schemas';
import { httpRoute } from '../lib/composition/http-route';
import { presentBalance, presentPage } from '../lib/http/presenters';
import { listBalancesFor } from '../lib/use-cases/balances';
import { listBalancesDoc } from '../lib/http/route-docs/settlements';

export const handler = httpRoute({ access: 'partner-read', query: BalanceListQuery, doc: listBalancesDoc }, async ({ caller, query }) => {
  const page = await listBalancesFor(balanceDeps, caller, query.partner_id, toBalanceFilters(query));
  return { status: 200, body: presentPage(page, presentBalance) };
});
