/** POST /api/v1/admin/settlements/run: a settlement run for every partner, or one (decisions.md §7), audited. */
import { settlementDeps } from '../lib/composition/settlement';
import { httpRoute } from '../lib/composition/http-route';
import { MAX_BODY_BYTES } from '../lib/http/json-limits';
import { presentSettlementRun } from '../lib/http/presenters';
import { AdminSettlementRunQuery, toRunScope } from '../lib/http/settlement-schemas';
import { runSettlementFor } from '../lib/use-cases/settlements';
import { adminRunSettlementDoc } from '../lib/http/route-docs/admin-transactions-settlements';

// No body is read; one over the usual limit is refused (413) rather than taken in.
export const handler = httpRoute({ access: 'admin', query: AdminSettlementRunQuery, maxBodyBytes: MAX_BODY_BYTES, doc: adminRunSettlementDoc }, async ({ caller, query }) => ({
  status: 200,
  body: presentSettlementRun(await runSettlementFor(settlementDeps, caller, toRunScope(query))),
}));
