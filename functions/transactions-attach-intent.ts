/** POST /api/v1/transactions/attach-intent (legacy): link a processor intent; initialized -> pending, then the intent's outcome if it has one. */
import { httpRoute } from '../lib/adapters/http-route';
import { AttachedIntent } from '../lib/http/response-schemas';
import { PAYMENT_GATE_ERRORS, type RouteDoc } from '../lib/http/route-doc';
import { AttachIntentBody } from '../lib/http/transaction-schemas';
import { transactionDeps } from '../lib/adapters/transactions';
import { attachIntent } from '../lib/use-cases/transactions';

const doc: RouteDoc = {
  summary: 'Attach a payment intent (legacy two-step flow)',
  description:
    'Step 2 of the legacy flow: links a payment intent you created at the processor to an `initialized` transaction, which becomes `pending`, in one ' +
    "conditional write. Another partner's transaction is 404 TX_NOT_FOUND. The partner and client must still pass the payment gate (a partner suspended " +
    'since `initialize` is 403 PARTNER_NOT_ACTIVE). The intent must exist at the service\'s processor account, be in the transaction\'s amount and ' +
    'currency, and not be linked to another transaction, else 400 VALIDATION_ERROR on `processor_payment_intent_id`; an intent made ' +
    'for another transaction or partner (its `svc_tx_id`/`partner_id` metadata) is refused exactly as an unknown one. An intent that already has its ' +
    'outcome (the buyer paid, or the payment was declined or canceled, before this call) has it applied at once, in a second write, exactly as the ' +
    "processor's event would apply it (fees, partner webhook `transaction_succeeded`, `transaction_failed` or `transaction_abandoned`): the answer's " +
    '`status` is then `succeeded`, `failed` or `abandoned`, and the event, when it comes, changes nothing. A canceled intent is no longer a ' +
    '400: it is attached and the answer is 200 with `status: abandoned`; a succeeded one answers `succeeded`, a declined one `failed`. ' +
    'Attaching the same intent again ' +
    'answers the transaction\'s status now; another intent once the transaction is past `initialized` is 409 TX_NOT_INITIALIZED. Use `attach-<svc_tx_id>` as the ' +
    'idempotency key.',
  tag: 'Transactions',
  responses: {
    200: { description: "The transaction, now `pending` (or the intent's outcome, when it has one already), with its intent", schema: AttachedIntent },
  },
  errors: ['TX_NOT_FOUND', 'TX_NOT_INITIALIZED', ...PAYMENT_GATE_ERRORS, 'PROCESSOR_KEY_MISSING', 'PROCESSOR_UNAVAILABLE'],
  example: { svc_tx_id: 'svc_tx_0f3k9m2p7q8r1s4t5v6w7x8y', processor_payment_intent_id: 'pi_3QxYz0123456789abcdefghij' },
};

export const handler = httpRoute({ access: 'partner-mutation', body: AttachIntentBody, doc }, async ({ caller, body }) => {
  const transaction = await attachIntent(transactionDeps, caller, {
    svcTxId: body.svc_tx_id,
    paymentIntentId: body.processor_payment_intent_id,
  });
  return {
    status: 200,
    body: { svc_tx_id: transaction.svcTxId, status: transaction.status, processor_payment_intent_id: transaction.processorPaymentIntentId },
  };
});
