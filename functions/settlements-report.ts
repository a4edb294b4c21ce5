/**
 * GET /api/v1/settlements/{id}/report.csv: the batch's reconciliation export (decisions.md §7), same access as
 * GET /settlements (another partner's batch is 404 BATCH_NOT_FOUND).
 */
import { settlementDeps } from '../lib/adapters/settlement';
import { batchReportContentDisposition, batchReportCsv, SETTLEMENT_REPORT_CONTENT_TYPE } from '../lib/domain/settlement-report';
import { httpRoute } from '../lib/http/chain';
import { SettlementParams } from '../lib/http/settlement-schemas';
import { getBatchFor } from '../lib/use-cases/settlements';

export const handler = httpRoute({ access: 'partner-read', params: SettlementParams }, async ({ caller, params }) => {
  const batch = await getBatchFor(settlementDeps, caller, params.id);
  return {
    status: 200,
    text: batchReportCsv(batch),
    contentType: SETTLEMENT_REPORT_CONTENT_TYPE,
    headers: { 'content-disposition': batchReportContentDisposition(batch) },
  };
});
