/** POST /api/v1/transactions/checkout-intent: the transaction and its processor payment intent, in one call. */
import { httpRoute } from '../lib/composition/http-route';
import { presentCheckout } from '../lib/http/presenters';
import { CheckoutBody, toNewCheckout } from '../lib/http/transaction-schemas';
import { transactionDeps } from '../lib/composition/transactions';
import { type CheckoutResult, createCheckoutIntent, type TransactionDeps, withKnownPayee } from '../lib/use-cases/transactions';
import { checkoutIntentDoc } from '../lib/http/route-docs/transactions';

/** The handler over given adapters (tests inject faults); `handler` uses the real ones. */
export const createHandler = (deps: TransactionDeps) =>
  httpRoute({ access: 'partner-mutation', body: CheckoutBody, prefetchPayee: true, doc: checkoutIntentDoc }, async ({ caller, body, idempotency, payee }) => {
    const answer = (result: CheckoutResult) => idempotency.answer(201, presentCheckout(result));
    return { status: 201, body: presentCheckout(await createCheckoutIntent(withKnownPayee(deps, payee), caller, toNewCheckout(body), idempotency, answer)) };
  });

export const handler = createHandler(transactionDeps);
