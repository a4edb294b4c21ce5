/** GET /api/v1/settlements: batches newest first, paged, filtered by `status` and `client_id` (decisions.md §9). */
import { settlementDeps } from '../lib/composition/settlement';
import { httpRoute } from '../lib/composition/http-route';
import { presentBatch, presentPage } from '../lib/http/presenters';
import { SettlementListQuery, toBatchFilters } from '../lib/http/settlement-schemas';
import { listBatchesFor } from '../lib/use-cases/settlements';
import { listSettlementsDoc } from '../lib/http/route-docs/settlements';

export const handler = httpRoute({ access: 'partner-read', query: SettlementListQuery, doc: listSettlementsDoc }, async ({ caller, query }) => {
  const page = await listBatchesFor(settlementDeps, caller, query.partner_id, toBatchFilters(query), { limit: query.limit, cursor: query.cursor });
  return { status: 200, body: presentPage(page, presentBatch) };
});
