/**
 * POST /api/v1/transactions/checkout-intent-v2 (widget mode, decisions.md §10): checkout-intent plus the
 * partner's branding. Called by the partner's backend only: no CORS.
 */
import { httpRoute } from '../lib/http/chain';
import { presentBranding, presentCheckout } from '../lib/http/presenters';
import { CheckoutBody, toNewCheckout } from '../lib/http/transaction-schemas';
import { transactionDeps } from '../lib/adapters/transactions';
import { createCheckoutIntent } from '../lib/use-cases/transactions';

export const handler = httpRoute({ access: 'partner-mutation', body: CheckoutBody }, async ({ caller, body, idempotency }) => {
  const result = await createCheckoutIntent(transactionDeps, caller, toNewCheckout(body), idempotency);
  return { status: 201, body: { ...presentCheckout(result), branding: presentBranding(result.partner) } };
});
