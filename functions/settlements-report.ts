/**
 * GET /api/v1/settlements/{id}/report.csv: the batch's reconciliation export (decisions.md §7), same access as
 * GET /settlements (another partner's batch is 404 BATCH_NOT_FOUND).
 */
import { settlementDeps } from '../lib/composition/settlement';
import { httpRoute } from '../lib/composition/http-route';
import { presentBatchReport } from '../lib/http/presenters';
import { SettlementParams } from '../lib/http/settlement-schemas';
import { batchReportFor } from '../lib/use-cases/settlements';
import { settlementReportDoc } from '../lib/http/route-docs/settlements';

export const handler = httpRoute({ access: 'partner-read', params: SettlementParams, doc: settlementReportDoc }, async ({ caller, params }) =>
  await presentBatchReport(await batchReportFor(settlementDeps, caller, params.id)),
);
