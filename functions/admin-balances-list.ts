/** GET /api/v1/admin/partners/{partner_id}/balances: a partner's balances for an admin, `owing=true` for the merchants that owe. */
import { balanceDeps } from '../lib/adapters/balances';
import { AdminBalanceListQuery, toBalanceFilters } from '../lib/http/balance-schemas';
import { httpRoute } from '../lib/adapters/http-route';
import { PartnerParams } from '../lib/http/partner-schemas';
import { presentBalance, presentPage } from '../lib/http/presenters';
import { BalancePage } from '../lib/http/response-schemas';
import type { RouteDoc } from '../lib/http/route-doc';
import { listBalancesFor } from '../lib/use-cases/balances';

const doc: RouteDoc = {
  summary: "List a partner's balances",
  description:
    "The partner's balances as `GET /balances` gives them, for an admin: per merchant and currency, what waits and what is owed. `owing=true` lists " +
    'only the merchants that owe money (their waiting reversals exceed their waiting sales): no payout is made to them until later sales cover it.',
  tag: 'Admin: transactions & settlements',
  responses: {
    200: { description: 'One page of balances', schema: BalancePage },
  },
  errors: ['PARTNER_NOT_FOUND'],
};

export const handler = httpRoute({ access: 'admin', params: PartnerParams, query: AdminBalanceListQuery, doc }, async ({ caller, params, query }) => {
  const page = await listBalancesFor(balanceDeps, caller, params.partner_id, toBalanceFilters(query));
  return { status: 200, body: presentPage(page, presentBalance) };
});
