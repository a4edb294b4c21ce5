/** POST /api/v1/settlements/run: batches every eligible transaction of the scope (decisions.md §7). */
import { settlementDeps } from '../lib/adapters/settlement';
import { httpRoute } from '../lib/adapters/http-route';
import { MAX_BODY_BYTES } from '../lib/http/json-limits';
import { presentSettlementRun } from '../lib/http/presenters';
import { SettlementRun } from '../lib/http/response-schemas';
import type { RouteDoc } from '../lib/http/route-doc';
import { SettlementRunQuery, toRunScope } from '../lib/http/settlement-schemas';
import { runSettlementFor } from '../lib/use-cases/settlements';

const doc: RouteDoc = {
  summary: 'Run settlement: batch the eligible transactions',
  description:
    'Groups the waiting ledger entries of the scope into new `pending` batches, one per partner, client and currency (at most 99 entries a ' +
    'batch; a larger group becomes several that together pay its net). Eligible: the entries of payments created before 00:00 UTC today: each ' +
    'succeeded payment\'s sale (its `transactionIds`, while still `succeeded`), and every refund, dispute, dispute fee and reinstatement waiting ' +
    '(listed in `adjustments`). A merchant whose waiting entries net to zero or less gets no batch: it owes (see `GET /balances`). Each batch and ' +
    'the move of its entries to `queued` are written atomically; concurrent runs never put one entry in two batches. No body.\n\n' +
    "Scope: a partner key settles its own partner (a `partner_id` naming another is 403 API_KEY_SCOPE_FORBIDDEN); a platform key settles every " +
    'partner, or the one `partner_id` names (404 PARTNER_NOT_FOUND if unknown). `client_id` narrows to one merchant. A run with nothing to settle ' +
    'answers 200 with `created_batches: 0`; what a run cannot write (a failure, or running out of time) waits for the next run, and a run that ' +
    'could write nothing because of failures answers 503 SERVICE_UNAVAILABLE (or 500): run again shortly.',
  tag: 'Settlements',
  responses: {
    200: { description: 'The batches this run created (none when nothing was eligible)', schema: SettlementRun },
  },
  // PARTNER_NOT_FOUND: a platform key's unknown `partner_id` (runSettlementFor), or the API key step's (a partner key whose partner no longer exists).
  errors: ['PARTNER_NOT_FOUND'],
};

// No body is read (the spec: "Body: none"); one over the usual limit is refused (413) rather than taken in.
export const handler = httpRoute({ access: 'partner-read', query: SettlementRunQuery, maxBodyBytes: MAX_BODY_BYTES, doc }, async ({ caller, query }) => ({
  status: 200,
  body: presentSettlementRun(await runSettlementFor(settlementDeps, caller, toRunScope(query))),
}));
