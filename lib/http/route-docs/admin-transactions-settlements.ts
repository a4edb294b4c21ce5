/**
 * The API reference's "Admin: transactions & settlements" section: every partner's transactions, batches and
 * balances for an admin (`functions/admin-transactions-*`, `admin-settlements-*`, `admin-balances-list`).
 */
import { BalancePage, SETTLEMENT_REPORT_RESPONSE, SettlementBatch, SettlementBatchPage, SettlementRun, Transaction, TransactionPage } from '../response-schemas';
import { PAY_BATCH_ERRORS, prose, type RouteDoc } from '../route-doc';

export const adminSearchTransactionsDoc: RouteDoc = {
  summary: 'Search transactions',
  description: prose`
    Every partner's transactions, newest first, as \`GET /transactions\` lists them for a platform key: paged with
    \`limit\` and \`cursor\` (the previous page's \`next_cursor\` with the same filters; an altered cursor, or one from
    another query, is 400 VALIDATION_ERROR), filtered by \`partner_id\`, \`client_id\`, \`status\`,
    \`partner_reference\` and the inclusive \`created_from\`/\`created_to\` range, all combined. \`svc_tx_id\` finds one
    transaction by its id (a page of at most one item).
  `,
  tag: 'Admin: transactions & settlements',
  responses: {
    200: { description: 'One page of transactions, newest first', schema: TransactionPage },
  },
  errors: [],
};

export const adminGetTransactionDoc: RouteDoc = {
  summary: 'Get a transaction',
  description: 'One transaction of any partner by its `svc_tx_id`, as `GET /transactions/{svc_tx_id}` reads it. Fee fields are null until the payment succeeds.',
  tag: 'Admin: transactions & settlements',
  responses: {
    200: { description: 'The transaction', schema: Transaction },
  },
  errors: ['TX_NOT_FOUND'],
};

export const adminListSettlementsDoc: RouteDoc = {
  summary: 'List settlement batches',
  description: prose`
    Every partner's settlement batches, newest first, as \`GET /settlements\` lists them for a platform key: paged with
    \`limit\` and \`cursor\` (the previous page's \`next_cursor\` with the same filters), filtered by \`partner_id\`,
    \`client_id\` and \`status\`. \`railATransferId\` / \`railBTransferId\` are null until the batch is paid.
  `,
  tag: 'Admin: transactions & settlements',
  responses: {
    200: { description: 'One page of settlement batches, newest first', schema: SettlementBatchPage },
  },
  errors: ['PARTNER_NOT_FOUND'],
};

export const adminRunSettlementDoc: RouteDoc = {
  summary: 'Run settlement',
  description: prose`
    The run \`POST /settlements/run\` makes for a platform key, with the same answer: every eligible transaction of
    every partner (or of the one \`partner_id\` names, 404 PARTNER_NOT_FOUND if unknown; \`client_id\` narrows to one
    merchant) grouped into new \`pending\` batches, each written atomically with its transactions moving to \`queued\`.
    No body. The run is recorded first in the audit log (\`settlement_run.requested\`: the admin and the scope). A run
    that could write nothing because of failures answers 503 SERVICE_UNAVAILABLE: run again shortly.
  `,
  tag: 'Admin: transactions & settlements',
  responses: {
    200: { description: 'The batches this run created (none when nothing was eligible)', schema: SettlementRun },
  },
  errors: ['PARTNER_NOT_FOUND'],
};

export const adminPayBatchDoc: RouteDoc = {
  summary: 'Pay a settlement batch',
  description: prose`
    The payout \`POST /settlements/pay\` makes, for any partner's batch, with the same answers: the batch's \`totalNet\`
    over its rail (A for GBP, EUR and USD, B for every other currency), \`sent\` with its transfer id and every
    transaction \`paid\`. A \`sent\` batch is 409 BATCH_ALREADY_PAID; a pay of the batch already running is 409
    BATCH_PAYOUT_IN_PROGRESS (concurrent pays never pay twice); a payee that may not be paid is 403; a rail failure is
    502 PAYOUT_FAILED with the batch \`failed\` (pay it again: safe). No body. Each attempt that takes the batch is
    recorded in the audit log with it (\`settlement_batch.payout_started\`: the admin, the currency and the net).
  `,
  tag: 'Admin: transactions & settlements',
  responses: {
    200: { description: 'The batch, `sent`', schema: SettlementBatch },
  },
  errors: PAY_BATCH_ERRORS,
};

export const adminSettlementReportDoc: RouteDoc = {
  summary: "Download a settlement batch's reconciliation report (CSV)",
  description: prose`
    Any partner's batch, as the same CSV \`GET /settlements/{id}/report.csv\` answers: one row per ledger entry
    (\`transaction\`, \`refund\`, \`chargeback\`, \`dispute_fee\`, \`dispute_reinstated\`), then a \`total\` row equal
    to the batch's totals, downloaded as \`settlement-<id>.csv\`.
  `,
  tag: 'Admin: transactions & settlements',
  responses: {
    200: SETTLEMENT_REPORT_RESPONSE,
  },
  errors: ['BATCH_NOT_FOUND'],
};

export const adminListBalancesDoc: RouteDoc = {
  summary: "List a partner's balances",
  description: prose`
    The partner's balances as \`GET /balances\` gives them, for an admin: per merchant and currency, what waits and what
    is owed. \`owing=true\` lists only the merchants that owe money (their waiting reversals exceed their waiting
    sales): no payout is made to them until later sales cover it.
  `,
  tag: 'Admin: transactions & settlements',
  responses: {
    200: { description: 'One page of balances', schema: BalancePage },
  },
  errors: ['PARTNER_NOT_FOUND'],
};
