/**
 * The API reference's "Settlements" section: settlement runs, batches, payouts, reports and balances
 * (`functions/settlements-*`, `balances-list`).
 */
import { BalancePage, SETTLEMENT_REPORT_RESPONSE, SettlementBatch, SettlementBatchPage, SettlementRun } from '../response-schemas';
import { PAY_BATCH_ERRORS, prose, type RouteDoc } from '../route-doc';

export const runSettlementDoc: RouteDoc = {
  summary: 'Run settlement: batch the eligible transactions',
  description: prose`
    Groups the waiting ledger entries of the scope into new \`pending\` batches, one per partner, client and currency
    (up to 10,000 entries a batch; a larger group becomes batches of 10,000 and a remainder, that together pay its
    net). Eligible: the entries of
    payments created before 00:00 UTC today: each succeeded payment's sale (its \`transactionIds\`, while still
    \`succeeded\`), and every refund, dispute, dispute fee and reinstatement waiting (listed in \`adjustments\`). A
    merchant whose waiting entries net to zero or less gets no batch: it owes (see \`GET /balances\`). A batch appears
    whole, all its transactions \`queued\` at once, or not at all; concurrent runs never put one entry in two
    batches. No body.

    Scope: a partner key settles its own partner (a \`partner_id\` naming another is 403 API_KEY_SCOPE_FORBIDDEN); a
    platform key settles every partner, or the one \`partner_id\` names (404 PARTNER_NOT_FOUND if unknown).
    \`client_id\` narrows to one merchant. A run with nothing to settle answers 200 with \`created_batches: 0\`; what a
    run cannot write (a failure, or running out of time) waits for the next run, and a run that could write nothing
    because of failures answers 503 SERVICE_UNAVAILABLE (or 500): run again shortly.
  `,
  tag: 'Settlements',
  responses: {
    200: { description: 'The batches this run created (none when nothing was eligible)', schema: SettlementRun },
  },
  // PARTNER_NOT_FOUND: a platform key's unknown `partner_id` (runSettlementFor), or the API key step's (a partner key whose partner no longer exists).
  errors: ['PARTNER_NOT_FOUND'],
};

export const listSettlementsDoc: RouteDoc = {
  summary: 'List settlement batches',
  description: prose`
    Settlement batches, newest first, paged with \`limit\` and \`cursor\` (pass the previous page's \`next_cursor\`
    unchanged, with the same filters; an altered cursor, or one from another query, is 400 VALIDATION_ERROR), filtered
    by \`status\` and \`client_id\`. A partner key lists its own partner's batches only; a platform key lists every
    partner's, or one partner's with \`partner_id\`. \`railATransferId\` / \`railBTransferId\` are null until the batch
    is paid (the rail is A for GBP, EUR and USD, B for every other currency).
  `,
  tag: 'Settlements',
  responses: {
    200: { description: 'One page of settlement batches, newest first', schema: SettlementBatchPage },
  },
  errors: ['PARTNER_NOT_FOUND'],
};

export const payBatchDoc: RouteDoc = {
  summary: 'Pay a settlement batch',
  description: prose`
    Pays the batch's \`totalNet\` to the merchant over its rail (rail A for GBP, EUR and USD, rail B for every other
    currency), with the batch id as the rail's idempotency key. On success the batch is \`sent\` with its rail transfer
    id set (\`railATransferId\` or \`railBTransferId\`) and every ledger entry in it is \`paid\`; a batch whose
    reversals take its whole net is \`sent\` without a payout (no transfer id). Authenticated like a read: the API key
    only (no HMAC signature, no idempotency-key header); paying again is always safe.

    A partner key pays its own partner's batches only (another partner's is 404 BATCH_NOT_FOUND); a platform key pays
    any. A \`sent\` batch is 409 BATCH_ALREADY_PAID; a pay of the batch already running is 409 BATCH_PAYOUT_IN_PROGRESS.
    No payout goes to a partner that is not active or whose KYC is not approved, nor to a merchant that is not active
    (403; the batch stays payable once reinstated), nor to a merchant that owes more in the batch's currency than the
    batch pays (409 CLIENT_OWES: refunds or disputes since the batch was made left its waiting entries below zero by
    more than its \`totalNet\`; the batch is payable once later sales cover the difference). A batch that pays more
    than the merchant owes is paid; the debt stays owed (\`GET /balances\`) until later sales cover it. When the rail refuses the payout or its outcome is unknown the answer is 502 PAYOUT_FAILED
    and the batch is \`failed\` with a \`failureReason\`: pay it again, which is safe (a payout already made is found at
    the rail, never repeated).
  `,
  tag: 'Settlements',
  responses: {
    200: { description: 'The batch, `sent`', schema: SettlementBatch },
  },
  errors: PAY_BATCH_ERRORS,
  example: { settlement_batch_id: '3f0c9d62-8a1e-4b7f-9c2d-5e6a7b8c9d0e' },
};

export const settlementReportDoc: RouteDoc = {
  summary: "Download a settlement batch's reconciliation report (CSV)",
  description: prose`
    The batch line by line, as \`text/csv; charset=utf-8\` (RFC 4180: CRLF after every record, a field quoted only when
    it holds a comma, a double quote, CR or LF), downloaded as \`settlement-<id>.csv\`. Header
    \`type,svc_tx_id,partner_reference,created_at,currency,gross,processor_fee,platform_fee,net\`; one row per ledger
    entry the batch settles, \`type\` being the entry's (\`transaction\` for a sale; \`refund\`, \`chargeback\`,
    \`dispute_fee\` with negative amounts; \`dispute_reinstated\`), then a \`total\` row equal to the batch's totals.
    Amounts in major units with the currency's decimals (\`12.30\`, JPY \`1000\`). A text cell starting with \`=\`,
    \`+\`, \`-\`, \`@\`, TAB, CR or \`'\` gets a leading \`'\` (spreadsheet formula injection): strip one leading \`'\`
    from \`svc_tx_id\` and \`partner_reference\` before comparing them with the API. Same access as
    \`GET /settlements\`: another partner's batch is 404 BATCH_NOT_FOUND.
  `,
  tag: 'Settlements',
  responses: {
    200: SETTLEMENT_REPORT_RESPONSE,
  },
  errors: ['BATCH_NOT_FOUND'],
};

export const listBalancesDoc: RouteDoc = {
  summary: 'List balances',
  description: prose`
    What waits for settlement, per merchant (\`client_id\`) and currency, summed from the ledger: \`unsettled_net\`
    (waiting sales), \`waiting_reversals\` (waiting refunds, disputes and dispute fees), \`owed\` and
    \`next_payout_estimate\`. A merchant whose reversals exceed its sales owes the difference and gets no batch until
    later sales cover it. Ordered by \`client_id\` then currency, paged with \`limit\` (merchant-currency pairs) and
    \`cursor\`; a pair with nothing waiting is not listed. A partner key reads its own partner; a platform key names the
    partner with \`partner_id\`.
  `,
  tag: 'Settlements',
  responses: {
    200: { description: 'One page of balances', schema: BalancePage },
  },
  errors: ['PARTNER_NOT_FOUND'],
};
