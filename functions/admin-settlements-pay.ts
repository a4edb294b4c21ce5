/** POST /api/v1/admin/settlements/{settlement_batch_id}/pay: pays one batch over its rail (decisions.md §7), audited. */
import { settlementDeps } from '../lib/adapters/settlement';
import { httpRoute } from '../lib/adapters/http-route';
import { MAX_BODY_BYTES } from '../lib/http/json-limits';
import { presentBatch } from '../lib/http/presenters';
import { SettlementBatch } from '../lib/http/response-schemas';
import { PAY_BATCH_ERRORS, type RouteDoc } from '../lib/http/route-doc';
import { AdminSettlementParams } from '../lib/http/settlement-schemas';
import { payBatch } from '../lib/use-cases/settlement-payouts';

const doc: RouteDoc = {
  summary: 'Pay a settlement batch',
  description:
    "The payout `POST /settlements/pay` makes, for any partner's batch, with the same answers: the batch's `totalNet` over its rail (A for GBP, EUR " +
    'and USD, B for every other currency), `sent` with its transfer id and every transaction `paid`. A `sent` batch is 409 BATCH_ALREADY_PAID; a pay ' +
    'of the batch already running is 409 BATCH_PAYOUT_IN_PROGRESS (concurrent pays never pay twice); a payee that may not be paid is 403; a rail ' +
    'failure is 502 PAYOUT_FAILED with the batch `failed` (pay it again: safe). No body. Each attempt that takes the batch is recorded in the audit ' +
    'log with it (`settlement_batch.payout_started`: the admin, the currency and the net).',
  tag: 'Admin: transactions & settlements',
  responses: {
    200: { description: 'The batch, `sent`', schema: SettlementBatch },
  },
  errors: PAY_BATCH_ERRORS,
};

// No body is read; one over the usual limit is refused (413) rather than taken in.
export const handler = httpRoute({ access: 'admin', params: AdminSettlementParams, maxBodyBytes: MAX_BODY_BYTES, doc }, async ({ caller, params }) => ({
  status: 200,
  body: presentBatch(await payBatch(settlementDeps, caller, params.settlement_batch_id)),
}));
