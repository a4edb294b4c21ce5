/** POST /api/v1/admin/settlements/run: a settlement run for every partner, or one (decisions.md §7), audited. */
import { settlementDeps } from '../lib/adapters/settlement';
import { httpRoute } from '../lib/adapters/http-route';
import { MAX_BODY_BYTES } from '../lib/http/json-limits';
import { presentSettlementRun } from '../lib/http/presenters';
import { SettlementRun } from '../lib/http/response-schemas';
import type { RouteDoc } from '../lib/http/route-doc';
import { AdminSettlementRunQuery, toRunScope } from '../lib/http/settlement-schemas';
import { runSettlementFor } from '../lib/use-cases/settlements';

const doc: RouteDoc = {
  summary: 'Run settlement',
  description:
    'The run `POST /settlements/run` makes for a platform key, with the same answer: every eligible transaction of every partner (or of the one ' +
    '`partner_id` names, 404 PARTNER_NOT_FOUND if unknown; `client_id` narrows to one merchant) grouped into new `pending` batches, each written ' +
    'atomically with its transactions moving to `queued`. No body. The run is recorded first in the audit log (`settlement_run.requested`: the ' +
    "admin and the scope). A run that could write nothing because of failures answers 503 SERVICE_UNAVAILABLE: run again shortly.",
  tag: 'Admin: transactions & settlements',
  responses: {
    200: { description: 'The batches this run created (none when nothing was eligible)', schema: SettlementRun },
  },
  errors: ['PARTNER_NOT_FOUND'],
};

// No body is read; one over the usual limit is refused (413) rather than taken in.
export const handler = httpRoute({ access: 'admin', query: AdminSettlementRunQuery, maxBodyBytes: MAX_BODY_BYTES, doc }, async ({ caller, query }) => ({
  status: 200,
  body: presentSettlementRun(await runSettlementFor(settlementDeps, caller, toRunScope(query))),
}));
