/** GET /api/v1/admin/partners/{partner_id}/balances: a partner's balances for an admin, `owing=true` for the merchants that owe. */
import { balanceDeps } from '../lib/composition/balances';
import { AdminBalanceListQuery, toBalanceFilters } from '../lib/http/balance-schemas';
import { httpRoute } from '../lib/composition/http-route';
import { PartnerParams } from '../lib/http/partner-schemas';
import { presentBalance, presentPage } from '../lib/http/presenters';
import { listBalancesFor } from '../lib/use-cases/balances';
import { adminListBalancesDoc } from '../lib/http/route-docs/admin-transactions-settlements';

export const handler = httpRoute({ access: 'admin', params: PartnerParams, query: AdminBalanceListQuery, doc: adminListBalancesDoc }, async ({ caller, params, query }) => {
  const page = await listBalancesFor(balanceDeps, caller, params.partner_id, toBalanceFilters(query));
  return { status: 200, body: presentPage(page, presentBalance) };
});
