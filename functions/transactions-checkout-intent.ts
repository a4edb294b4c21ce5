/** POST /api/v1/transactions/checkout-intent: the transaction and its processor payment intent, in one call. */
import { httpRoute } from '../lib/http/chain';
import { presentCheckout } from '../lib/http/presenters';
import { CheckoutBody, toNewCheckout } from '../lib/http/transaction-schemas';
import { transactionDeps } from '../lib/adapters/transactions';
import { createCheckoutIntent, type TransactionDeps } from '../lib/use-cases/transactions';

/** The handler over given adapters (tests inject faults); `handler` uses the real ones. */
export const createHandler = (deps: TransactionDeps) =>
  httpRoute({ access: 'partner-mutation', body: CheckoutBody }, async ({ caller, body, idempotency }) => ({
    status: 201,
    body: presentCheckout(await createCheckoutIntent(deps, caller, toNewCheckout(body), idempotency)),
  }));

export const handler = createHandler(transactionDeps);
