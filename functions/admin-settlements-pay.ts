/** POST /api/v1/admin/settlements/{settlement_batch_id}/pay: pays one batch over its rail (decisions.md §7), audited. */
import { settlementDeps } from '../lib/composition/settlement';
import { httpRoute } from '../lib/composition/http-route';
import { MAX_BODY_BYTES } from '../lib/http/json-limits';
import { presentBatch } from '../lib/http/presenters';
import { AdminSettlementParams } from '../lib/http/settlement-schemas';
import { payBatch } from '../lib/use-cases/settlement-payouts';
import { adminPayBatchDoc } from '../lib/http/route-docs/admin-transactions-settlements';

// No body is read; one over the usual limit is refused (413) rather than taken in.
export const handler = httpRoute({ access: 'admin', params: AdminSettlementParams, maxBodyBytes: MAX_BODY_BYTES, doc: adminPayBatchDoc }, async ({ caller, params }) => ({
  status: 200,
  body: presentBatch(await payBatch(settlementDeps, caller, params.settlement_batch_id)),
}));
