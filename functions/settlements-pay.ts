/** POST /api/v1/settlements/pay: pays one batch over its rail (decisions.md §7). */
import { settlementDeps } from '../lib/adapters/settlement';
import { httpRoute } from '../lib/adapters/http-route';
import { presentBatch } from '../lib/http/presenters';
import { SettlementBatch } from '../lib/http/response-schemas';
import { PAY_BATCH_ERRORS, type RouteDoc } from '../lib/http/route-doc';
import { SettlementPayBody } from '../lib/http/settlement-schemas';
import { payBatch } from '../lib/use-cases/settlement-payouts';

const doc: RouteDoc = {
  summary: 'Pay a settlement batch',
  description:
    "Pays the batch's `totalNet` to the merchant over its rail (rail A for GBP, EUR and USD, rail B for every other currency), with the batch id as " +
    "the rail's idempotency key. On success the batch is `sent` with its rail transfer id set (`railATransferId` or `railBTransferId`) and every " +
    'ledger entry in it is `paid`; a batch whose reversals take its whole net is `sent` without a payout (no transfer id). Authenticated like a read: the ' +
    'API key only (no HMAC signature, no idempotency-key header); paying again is always safe.\n\n' +
    "A partner key pays its own partner's batches only (another partner's is 404 BATCH_NOT_FOUND); a platform key pays any. A `sent` batch is 409 " +
    'BATCH_ALREADY_PAID; a pay of the batch already running is 409 BATCH_PAYOUT_IN_PROGRESS. No payout goes to a partner that is not active or whose ' +
    'KYC is not approved, nor to a merchant that is not active (403; the batch stays payable once reinstated), nor to a merchant that owes money ' +
    'in the batch\'s currency since the batch was made (409 CLIENT_OWES: a refund or dispute left its waiting entries below zero; the batch is ' +
    'payable once later sales cover it). When the rail refuses the payout or ' +
    'its outcome is unknown the answer is 502 PAYOUT_FAILED and the batch is `failed` with a `failureReason`: pay it again, which is safe (a payout ' +
    'already made is found at the rail, never repeated).',
  tag: 'Settlements',
  responses: {
    200: { description: 'The batch, `sent`', schema: SettlementBatch },
  },
  errors: PAY_BATCH_ERRORS,
  example: { settlement_batch_id: '3f0c9d62-8a1e-4b7f-9c2d-5e6a7b8c9d0e' },
};

export const handler = httpRoute({ access: 'partner-read', body: SettlementPayBody, doc }, async ({ caller, body }) => ({
  status: 200,
  body: presentBatch(await payBatch(settlementDeps, caller, body.settlement_batch_id)),
}));
