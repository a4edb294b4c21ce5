/** GET /api/v1/admin/settlements: every partner's settlement batches, newest first, filtered and paged. */
import { settlementDeps } from '../lib/composition/settlement';
import { httpRoute } from '../lib/composition/http-route';
import { presentBatch, presentPage } from '../lib/http/presenters';
import { AdminSettlementListQuery, toBatchFilters } from '../lib/http/settlement-schemas';
import { listBatchesFor } from '../lib/use-cases/settlements';
import { adminListSettlementsDoc } from '../lib/http/route-docs/admin-transactions-settlements';

export const handler = httpRoute({ access: 'admin', query: AdminSettlementListQuery, doc: adminListSettlementsDoc }, async ({ caller, query }) => {
  const page = await listBatchesFor(settlementDeps, caller, query.partner_id, toBatchFilters(query), { limit: query.limit, cursor: query.cursor });
  return { status: 200, body: presentPage(page, presentBatch) };
});
