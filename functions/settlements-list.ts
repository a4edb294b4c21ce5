/** GET /api/v1/settlements: batches newest first, paged, filtered by `status` and `client_id` (decisions.md §9). */
import { settlementDeps } from '../lib/adapters/settlement';
import { httpRoute } from '../lib/adapters/http-route';
import { presentBatch, presentPage } from '../lib/http/presenters';
import { SettlementBatchPage } from '../lib/http/response-schemas';
import type { RouteDoc } from '../lib/http/route-doc';
import { SettlementListQuery, toBatchFilters } from '../lib/http/settlement-schemas';
import { listBatchesFor } from '../lib/use-cases/settlements';

const doc: RouteDoc = {
  summary: 'List settlement batches',
  description:
    "Settlement batches, newest first, paged with `limit` and `cursor` (pass the previous page's `next_cursor` unchanged, with the same filters; " +
    'an altered cursor, or one from another query, is 400 VALIDATION_ERROR), filtered by `status` and `client_id`. A partner key lists its own ' +
    "partner's batches only; a platform key lists every partner's, or one partner's with `partner_id`. `railATransferId` / `railBTransferId` are " +
    'null until the batch is paid (the rail is A for GBP, EUR and USD, B for every other currency).',
  tag: 'Settlements',
  responses: {
    200: { description: 'One page of settlement batches, newest first', schema: SettlementBatchPage },
  },
  errors: [],
};

export const handler = httpRoute({ access: 'partner-read', query: SettlementListQuery, doc }, async ({ caller, query }) => {
  const page = await listBatchesFor(settlementDeps, caller, query.partner_id, toBatchFilters(query), { limit: query.limit, cursor: query.cursor });
  return { status: 200, body: presentPage(page, presentBatch) };
});
