/** GET /api/v1/admin/settlements/{settlement_batch_id}/report.csv: any partner's batch report (decisions.md §7). */
import { settlementDeps } from '../lib/composition/settlement';
import { httpRoute } from '../lib/composition/http-route';
import { presentBatchReport } from '../lib/http/presenters';
import { AdminSettlementParams } from '../lib/http/settlement-schemas';
import { batchReportFor } from '../lib/use-cases/settlements';
import { adminSettlementReportDoc } from '../lib/http/route-docs/admin-transactions-settlements';

export const handler = httpRoute({ access: 'admin', params: AdminSettlementParams, doc: adminSettlementReportDoc }, async ({ caller, params }) =>
  await presentBatchReport(await batchReportFor(settlementDeps, caller, params.settlement_batch_id)),
);
