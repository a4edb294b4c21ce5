/** POST /api/v1/settlements/run: batches every eligible transaction of the scope (decisions.md §7). */
import { settlementDeps } from '../lib/adapters/settlement';
import { httpRoute } from '../lib/http/chain';
import { MAX_BODY_BYTES } from '../lib/http/json-limits';
import { presentBatch } from '../lib/http/presenters';
import { SettlementRunQuery } from '../lib/http/settlement-schemas';
import { runScopeFor, runSettlement } from '../lib/use-cases/settlements';

// No body is read (the spec: "Body: none"); one over the usual limit is refused (413) rather than taken in.
export const handler = httpRoute({ access: 'partner-read', query: SettlementRunQuery, maxBodyBytes: MAX_BODY_BYTES }, async ({ caller, query }) => {
  const scope = await runScopeFor(settlementDeps, caller, { partnerId: query.partner_id, clientId: query.client_id });
  const batches = await runSettlement(settlementDeps, scope);
  return { status: 200, body: { created_batches: batches.length, batches: batches.map(presentBatch) } };
});
