/** POST /api/v1/settlements/pay: pays one batch over its rail (decisions.md §7). */
import { settlementDeps } from '../lib/composition/settlement';
import { httpRoute } from '../lib/composition/http-route';
import { presentBatch } from '../lib/http/presenters';
import { SettlementPayBody } from '../lib/http/settlement-schemas';
import { payBatch } from '../lib/use-cases/settlement-payouts';
import { payBatchDoc } from '../lib/http/route-docs/settlements';

export const handler = httpRoute({ access: 'partner-read', body: SettlementPayBody, doc: payBatchDoc }, async ({ caller, body }) => ({
  status: 200,
  body: presentBatch(await payBatch(settlementDeps, caller, body.settlement_batch_id)),
}));
