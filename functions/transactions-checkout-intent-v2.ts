/**
 * POST /api/v1/transactions/checkout-intent-v2 (widget mode, decisions.md §10): checkout-intent plus the
 * partner's branding. Called by the partner's backend only: no CORS.
 */
import { httpRoute } from '../lib/composition/http-route';
import { presentBranding, presentCheckout } from '../lib/http/presenters';
import { CheckoutBody, toNewCheckout } from '../lib/http/transaction-schemas';
import { transactionDeps } from '../lib/composition/transactions';
import { type CheckoutResult, createCheckoutIntent, withKnownPayee } from '../lib/use-cases/transactions';
import { checkoutIntentV2Doc } from '../lib/http/route-docs/transactions';

const present = (result: CheckoutResult) => ({ ...presentCheckout(result), branding: presentBranding(result.partner) });

export const handler = httpRoute({ access: 'partner-mutation', body: CheckoutBody, prefetchPayee: true, doc: checkoutIntentV2Doc }, async ({ caller, body, idempotency, payee }) => {
  const answer = (result: CheckoutResult) => idempotency.answer(201, present(result));
  const result = await createCheckoutIntent(withKnownPayee(transactionDeps, payee), caller, toNewCheckout(body), idempotency, answer);
  return { status: 201, body: present(result) };
});
