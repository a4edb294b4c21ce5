/** GET /api/v1/balances: what waits for settlement per merchant and currency, and what each owes (decisions.md §5a). */
import { balanceDeps } from '../lib/adapters/balances';
import { BalanceListQuery, toBalanceFilters } from '../lib/http/balance-schemas';
import { httpRoute } from '../lib/adapters/http-route';
import { presentBalance, presentPage } from '../lib/http/presenters';
import { BalancePage } from '../lib/http/response-schemas';
import type { RouteDoc } from '../lib/http/route-doc';
import { listBalancesFor } from '../lib/use-cases/balances';

const doc: RouteDoc = {
  summary: 'List balances',
  description:
    'What waits for settlement, per merchant (`client_id`) and currency, summed from the ledger: `unsettled_net` (waiting sales), `waiting_reversals` ' +
    '(waiting refunds, disputes and dispute fees), `owed` and `next_payout_estimate`. A merchant whose reversals exceed its sales owes the difference ' +
    'and gets no batch until later sales cover it. Ordered by `client_id` then currency, paged with `limit` (merchant-currency pairs) and `cursor`; ' +
    'a pair with nothing waiting is not listed. A partner key reads its own partner; a platform key names the partner with `partner_id`.',
  tag: 'Settlements',
  responses: {
    200: { description: 'One page of balances', schema: BalancePage },
  },
  errors: [],
};

export const handler = httpRoute({ access: 'partner-read', query: BalanceListQuery, doc }, async ({ caller, query }) => {
  const page = await listBalancesFor(balanceDeps, caller, query.partner_id, toBalanceFilters(query));
  return { status: 200, body: presentPage(page, presentBalance) };
});
