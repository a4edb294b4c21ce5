/** POST /api/v1/transactions/attach-intent (legacy): link a processor intent; initialized -> pending, then the intent's outcome if it has one. */
import { httpRoute } from '../lib/composition/http-route';
import { AttachIntentBody } from '../lib/http/transaction-schemas';
import { transactionDeps } from '../lib/composition/transactions';
import { attachIntent } from '../lib/use-cases/transactions';
import { attachIntentDoc } from '../lib/http/route-docs/transactions';

export const handler = httpRoute({ access: 'partner-mutation', body: AttachIntentBody, doc: attachIntentDoc }, async ({ caller, body }) => {
  const transaction = await attachIntent(transactionDeps, caller, {
    svcTxId: body.svc_tx_id,
    paymentIntentId: body.processor_payment_intent_id,
  });
  return {
    status: 200,
    body: { svc_tx_id: transaction.svcTxId, status: transaction.status, processor_payment_intent_id: transaction.processorPaymentIntentId },
  };
});
