/**
 * GET /api/v1/settlements/{id}/report.csv: the batch's reconciliation export (decisions.md §7), same access as
 * GET /settlements (another partner's batch is 404 BATCH_NOT_FOUND).
 */
import { settlementDeps } from '../lib/adapters/settlement';
import { httpRoute } from '../lib/adapters/http-route';
import { presentBatchReport } from '../lib/http/presenters';
import { SETTLEMENT_REPORT_RESPONSE } from '../lib/http/response-schemas';
import type { RouteDoc } from '../lib/http/route-doc';
import { SettlementParams } from '../lib/http/settlement-schemas';
import { getBatchFor } from '../lib/use-cases/settlements';

const doc: RouteDoc = {
  summary: "Download a settlement batch's reconciliation report (CSV)",
  description:
    'The batch line by line, as `text/csv; charset=utf-8` (RFC 4180: CRLF after every record, a field quoted only when it holds a comma, a double ' +
    'quote, CR or LF), downloaded as `settlement-<id>.csv`. Header `type,svc_tx_id,partner_reference,created_at,currency,gross,processor_fee,platform_fee,net`; ' +
    'one row per ledger entry the batch settles, `type` being the entry\'s (`transaction` for a sale; `refund`, `chargeback`, `dispute_fee` with ' +
    'negative amounts; `dispute_reinstated`), then a `total` row equal to the ' +
    "batch's totals. Amounts in major units with the currency's decimals (`12.30`, JPY `1000`). A text cell starting with `=`, `+`, `-`, `@`, " +
    "TAB, CR or `'` gets a leading `'` (spreadsheet formula injection): strip one leading `'` from `svc_tx_id` and `partner_reference` before " +
    "comparing them with the API. Same access as `GET /settlements`: another partner's batch is 404 BATCH_NOT_FOUND.",
  tag: 'Settlements',
  responses: {
    200: SETTLEMENT_REPORT_RESPONSE,
  },
  errors: ['BATCH_NOT_FOUND'],
};

export const handler = httpRoute({ access: 'partner-read', params: SettlementParams, doc }, async ({ caller, params }) =>
  presentBatchReport(await getBatchFor(settlementDeps, caller, params.id)),
);
