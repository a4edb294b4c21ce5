/** POST /api/v1/transactions/checkout-intent: the transaction and its processor payment intent, in one call. */
import { httpRoute } from '../lib/adapters/http-route';
import { presentCheckout } from '../lib/http/presenters';
import { CheckoutIntent } from '../lib/http/response-schemas';
import { CHECKOUT_ERRORS, type RouteDoc } from '../lib/http/route-doc';
import { CHECKOUT_EXAMPLE, CheckoutBody, toNewCheckout } from '../lib/http/transaction-schemas';
import { transactionDeps } from '../lib/adapters/transactions';
import { type CheckoutResult, createCheckoutIntent, type TransactionDeps, withKnownPayee } from '../lib/use-cases/transactions';

/** What the route does (docs/checkout.md); -v2 says the same. */
const CHECKOUT_DESCRIPTION =
  'Creates the transaction (`pending`) and its payment intent at the card processor in one call. Checks first, in this order: a partner key names ' +
  'only its own partner (403 API_KEY_SCOPE_FORBIDDEN); the partner exists, is active and its KYC approved; the client exists under that partner and is ' +
  'active (the partner and client are checked again in the write). The `svc_tx_id` is derived from the idempotency key and the exact body, and the ' +
  "intent is created with an idempotency key derived from it, so a retry with the same idempotency key and body (within its 24 hours) finds the same intent and transaction: " +
  'one attempt never makes two payments. Use `checkout-<partner_reference>` as the idempotency key, and retry a 502 or 503 with it. A value the processor ' +
  'refuses (e.g. below its minimum charge amount) is 400 VALIDATION_ERROR on that field.\n\n' +
  'In the browser, initialise the processor\'s client (Stripe.js) with `processor_publishable_key` and pass `client_secret` to its payment element; ' +
  'reconcile the outcome by `svc_tx_id` (`GET /transactions/{svc_tx_id}`, partner webhooks) from your backend.';

const doc: RouteDoc = {
  summary: 'Create a checkout intent',
  description: CHECKOUT_DESCRIPTION,
  tag: 'Transactions',
  responses: {
    201: { description: 'The pending transaction and what the browser needs to collect the payment', schema: CheckoutIntent },
  },
  errors: CHECKOUT_ERRORS,
  example: CHECKOUT_EXAMPLE,
};

/** The handler over given adapters (tests inject faults); `handler` uses the real ones. */
export const createHandler = (deps: TransactionDeps) =>
  httpRoute({ access: 'partner-mutation', body: CheckoutBody, prefetchPayee: true, doc }, async ({ caller, body, idempotency, payee }) => {
    const answer = (result: CheckoutResult) => idempotency.answer(201, presentCheckout(result));
    return { status: 201, body: presentCheckout(await createCheckoutIntent(withKnownPayee(deps, payee), caller, toNewCheckout(body), idempotency, answer)) };
  });

export const handler = createHandler(transactionDeps);
