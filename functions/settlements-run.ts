/** POST /api/v1/settlements/run: batches every eligible transaction of the scope (decisions.md §7). */
import { settlementDeps } from '../lib/adapters';
import { httpRoute } from '../lib/http/chain';
import { presentBatch } from '../lib/http/presenters';
import { SettlementRunQuery } from '../lib/http/settlement-schemas';
import { runScopeFor, runSettlement } from '../lib/use-cases/settlements';

export const handler = httpRoute({ access: 'partner-read', query: SettlementRunQuery }, async ({ caller, query }) => {
  const scope = await runScopeFor(settlementDeps, caller, { partnerId: query.partner_id, clientId: query.client_id });
  const batches = await runSettlement(settlementDeps, scope);
  return { status: 200, body: { created_batches: batches.length, batches: batches.map(presentBatch) } };
});
