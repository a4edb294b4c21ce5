/** POST /api/v1/settlements/run: batches every eligible transaction of the scope (decisions.md §7). */
import { settlementDeps } from '../lib/composition/settlement';
import { httpRoute } from '../lib/composition/http-route';
import { MAX_BODY_BYTES } from '../lib/http/json-limits';
import { presentSettlementRun } from '../lib/http/presenters';
import { SettlementRunQuery, toRunScope } from '../lib/http/settlement-schemas';
import { runSettlementFor } from '../lib/use-cases/settlements';
import { runSettlementDoc } from '../lib/http/route-docs/settlements';

// No body is read (the spec: "Body: none"); one over the usual limit is refused (413) rather than taken in.
export const handler = httpRoute({ access: 'partner-read', query: SettlementRunQuery, maxBodyBytes: MAX_BODY_BYTES, doc: runSettlementDoc }, async ({ caller, query }) => ({
  status: 200,
  body: presentSettlementRun(await runSettlementFor(settlementDeps, caller, toRunScope(query))),
}));
