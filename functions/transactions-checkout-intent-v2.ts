/**
 * POST /api/v1/transactions/checkout-intent-v2 (widget mode, decisions.md §10): checkout-intent plus the
 * partner's branding. Called by the partner's backend only: no CORS.
 */
import { httpRoute } from '../lib/adapters/http-route';
import { presentBranding, presentCheckout } from '../lib/http/presenters';
import { CheckoutIntentV2 } from '../lib/http/response-schemas';
import { CHECKOUT_ERRORS, type RouteDoc } from '../lib/http/route-doc';
import { CHECKOUT_EXAMPLE, CheckoutBody, toNewCheckout } from '../lib/http/transaction-schemas';
import { transactionDeps } from '../lib/adapters/transactions';
import { type CheckoutResult, createCheckoutIntent, withKnownPayee } from '../lib/use-cases/transactions';

const doc: RouteDoc = {
  summary: 'Create a checkout intent, with the branding (widget mode)',
  description:
    'The same headers, body, checks and errors as `POST /transactions/checkout-intent`, and the same answer plus `branding` (what the checkout ' +
    "widget shows: `display_name`, the partner's name when none is set; `logo_url`; `brand_color`). Not CORS-enabled: the browser asks your " +
    'backend, which signs and calls this route. Use `checkout-<partner_reference>` as the idempotency key, and retry a 502 or 503 with it.',
  tag: 'Transactions',
  responses: {
    201: { description: 'The pending transaction, what the browser needs to collect the payment, and the branding', schema: CheckoutIntentV2 },
  },
  errors: CHECKOUT_ERRORS,
  example: CHECKOUT_EXAMPLE,
};

const present = (result: CheckoutResult) => ({ ...presentCheckout(result), branding: presentBranding(result.partner) });

export const handler = httpRoute({ access: 'partner-mutation', body: CheckoutBody, prefetchPayee: true, doc }, async ({ caller, body, idempotency, payee }) => {
  const answer = (result: CheckoutResult) => idempotency.answer(201, present(result));
  const result = await createCheckoutIntent(withKnownPayee(transactionDeps, payee), caller, toNewCheckout(body), idempotency, answer);
  return { status: 201, body: present(result) };
});
