/** GET /api/v1/admin/settlements/{settlement_batch_id}/report.csv: any partner's batch report (decisions.md §7). */
import { settlementDeps } from '../lib/adapters/settlement';
import { httpRoute } from '../lib/adapters/http-route';
import { presentBatchReport } from '../lib/http/presenters';
import { SETTLEMENT_REPORT_RESPONSE } from '../lib/http/response-schemas';
import type { RouteDoc } from '../lib/http/route-doc';
import { AdminSettlementParams } from '../lib/http/settlement-schemas';
import { getBatchFor } from '../lib/use-cases/settlements';

const doc: RouteDoc = {
  summary: "Download a settlement batch's reconciliation report (CSV)",
  description:
    "Any partner's batch, as the same CSV `GET /settlements/{id}/report.csv` answers: one row per ledger entry (`transaction`, `refund`, " +
    "`chargeback`, `dispute_fee`, `dispute_reinstated`), then a `total` row equal to the batch's totals, downloaded as `settlement-<id>.csv`.",
  tag: 'Admin: transactions & settlements',
  responses: {
    200: SETTLEMENT_REPORT_RESPONSE,
  },
  errors: ['BATCH_NOT_FOUND'],
};

export const handler = httpRoute({ access: 'admin', params: AdminSettlementParams, doc }, async ({ caller, params }) =>
  presentBatchReport(await getBatchFor(settlementDeps, caller, params.settlement_batch_id)),
);
