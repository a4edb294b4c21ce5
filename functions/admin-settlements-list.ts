/** GET /api/v1/admin/settlements: every partner's settlement batches, newest first, filtered and paged. */
import { settlementDeps } from '../lib/adapters/settlement';
import { httpRoute } from '../lib/adapters/http-route';
import { presentBatch, presentPage } from '../lib/http/presenters';
import { SettlementBatchPage } from '../lib/http/response-schemas';
import type { RouteDoc } from '../lib/http/route-doc';
import { AdminSettlementListQuery, toBatchFilters } from '../lib/http/settlement-schemas';
import { listBatchesFor } from '../lib/use-cases/settlements';

const doc: RouteDoc = {
  summary: 'List settlement batches',
  description:
    "Every partner's settlement batches, newest first, as `GET /settlements` lists them for a platform key: paged with `limit` and `cursor` (the " +
    "previous page's `next_cursor` with the same filters), filtered by `partner_id`, `client_id` and `status`. `railATransferId` / " +
    '`railBTransferId` are null until the batch is paid.',
  tag: 'Admin: transactions & settlements',
  responses: {
    200: { description: 'One page of settlement batches, newest first', schema: SettlementBatchPage },
  },
  errors: [],
};

export const handler = httpRoute({ access: 'admin', query: AdminSettlementListQuery, doc }, async ({ caller, query }) => {
  const page = await listBatchesFor(settlementDeps, caller, query.partner_id, toBatchFilters(query), { limit: query.limit, cursor: query.cursor });
  return { status: 200, body: presentPage(page, presentBatch) };
});
