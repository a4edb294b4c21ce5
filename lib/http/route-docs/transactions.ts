/**
 * The API reference's "Transactions" section: checkout intents, the legacy two-step flow and reads
 * (`functions/transactions-*`).
 */
import { AttachedIntent, CheckoutIntent, CheckoutIntentV2, InitializedTransaction, Transaction, TransactionPage } from '../response-schemas';
import { CHECKOUT_ERRORS, PAYMENT_GATE_ERRORS, prose, type RouteDoc } from '../route-doc';
import { CHECKOUT_EXAMPLE } from '../transaction-schemas';

/** What the route does (docs/checkout.md); -v2 says the same. */
export const checkoutIntentDoc: RouteDoc = {
  summary: 'Create a checkout intent',
  description: prose`
    Creates the transaction (\`pending\`) and its payment intent at the card processor in one call. Checks first, in
    this order: a partner key names only its own partner (403 API_KEY_SCOPE_FORBIDDEN); the partner exists, is active
    and its KYC approved; the client exists under that partner and is active (the partner and client are checked again
    in the write). The \`svc_tx_id\` is derived from the idempotency key and the exact body, and the intent is created
    with an idempotency key derived from it, so a retry with the same idempotency key and body (within its 24 hours)
    finds the same intent and transaction: one attempt never makes two payments. Use \`checkout-<partner_reference>\` as
    the idempotency key, and retry a 502 or 503 with it. A value the processor refuses (e.g. below its minimum charge
    amount) is 400 VALIDATION_ERROR on that field.

    In the browser, initialise the processor's client (Stripe.js) with \`processor_publishable_key\` and pass
    \`client_secret\` to its payment element; reconcile the outcome by \`svc_tx_id\` (\`GET /transactions/{svc_tx_id}\`,
    partner webhooks) from your backend.
  `,
  tag: 'Transactions',
  responses: {
    201: { description: 'The pending transaction and what the browser needs to collect the payment', schema: CheckoutIntent },
  },
  errors: CHECKOUT_ERRORS,
  example: CHECKOUT_EXAMPLE,
};

export const checkoutIntentV2Doc: RouteDoc = {
  summary: 'Create a checkout intent, with the branding (widget mode)',
  description: prose`
    The same headers, body, checks and errors as \`POST /transactions/checkout-intent\`, and the same answer plus
    \`branding\` (what the checkout widget shows: \`display_name\`, the partner's name when none is set; \`logo_url\`;
    \`brand_color\`). Not CORS-enabled: the browser asks your backend, which signs and calls this route. Use
    \`checkout-<partner_reference>\` as the idempotency key, and retry a 502 or 503 with it.
  `,
  tag: 'Transactions',
  responses: {
    201: { description: 'The pending transaction, what the browser needs to collect the payment, and the branding', schema: CheckoutIntentV2 },
  },
  errors: CHECKOUT_ERRORS,
  example: CHECKOUT_EXAMPLE,
};

export const initializeTransactionDoc: RouteDoc = {
  summary: 'Initialize a transaction (legacy two-step flow)',
  description: prose`
    Step 1 of the legacy flow: creates only the transaction (\`initialized\`), with no payment intent and no statement
    descriptor; attach an intent you created at the processor with \`POST /transactions/attach-intent\`. The same
    partner and client checks as checkout-intent: a partner key names only its own partner (403
    API_KEY_SCOPE_FORBIDDEN); the partner exists, is active and its KYC approved; the client exists under that partner
    and is active. Use \`init-<partner_reference>\` as the idempotency key.
  `,
  tag: 'Transactions',
  responses: {
    201: { description: 'The initialized transaction', schema: InitializedTransaction },
  },
  errors: PAYMENT_GATE_ERRORS,
  example: {
    partner_id: 'ptr_0f3k9m2p7q8r1s4t5v6w7x8y',
    client_id: 'merchant-001',
    amount: 49.99,
    currency: 'USD',
    partner_reference: 'order-8842',
    meta: { cart: 'c-2' },
  },
};

export const attachIntentDoc: RouteDoc = {
  summary: 'Attach a payment intent (legacy two-step flow)',
  description: prose`
    Step 2 of the legacy flow: links a payment intent you created at the processor to an \`initialized\` transaction,
    which becomes \`pending\`, in one conditional write. Another partner's transaction is 404 TX_NOT_FOUND. The partner
    and client must still pass the payment gate (a partner suspended since \`initialize\` is 403 PARTNER_NOT_ACTIVE).
    The intent must exist at the service's processor account, be in the transaction's amount and currency, and not be
    linked to another transaction, else 400 VALIDATION_ERROR on \`processor_payment_intent_id\`; an intent made for
    another transaction or partner (its \`svc_tx_id\`/\`partner_id\` metadata) is refused exactly as an unknown one. An
    intent that already has its outcome (the buyer paid, or the payment was declined or canceled, before this call) has
    it applied at once, in a second write, exactly as the processor's event would apply it (fees, partner webhook
    \`transaction_succeeded\`, \`transaction_failed\` or \`transaction_abandoned\`): the answer's \`status\` is then
    \`succeeded\`, \`failed\` or \`abandoned\`, and the event, when it comes, changes nothing. A canceled intent is no
    longer a 400: it is attached and the answer is 200 with \`status: abandoned\`; a succeeded one answers
    \`succeeded\`, a declined one \`failed\`. Attaching the same intent again answers the transaction's status now;
    another intent once the transaction is past \`initialized\` is 409 TX_NOT_INITIALIZED. Use \`attach-<svc_tx_id>\` as
    the idempotency key.
  `,
  tag: 'Transactions',
  responses: {
    200: { description: "The transaction, now `pending` (or the intent's outcome, when it has one already), with its intent", schema: AttachedIntent },
  },
  errors: ['TX_NOT_FOUND', 'TX_NOT_INITIALIZED', ...PAYMENT_GATE_ERRORS, 'PROCESSOR_KEY_MISSING', 'PROCESSOR_UNAVAILABLE'],
  example: { svc_tx_id: 'svc_tx_0f3k9m2p7q8r1s4t5v6w7x8y', processor_payment_intent_id: 'pi_3QxYz0123456789abcdefghij' },
};

export const listTransactionsDoc: RouteDoc = {
  summary: 'List transactions',
  description: prose`
    Transactions newest first, paged with \`limit\` and \`cursor\` (pass the previous page's \`next_cursor\` with the
    same filters; an altered cursor, or one from another query or partner, is 400 VALIDATION_ERROR). Filters combine:
    \`status\`, \`client_id\`, \`partner_reference\`, and the inclusive \`created_from\`/\`created_to\` range. A partner
    key lists its own partner's transactions; a platform key lists every partner's, or one partner's with
    \`partner_id\`.
  `,
  tag: 'Transactions',
  responses: {
    200: { description: 'One page of transactions, newest first', schema: TransactionPage },
  },
  errors: [],
};

export const getTransactionDoc: RouteDoc = {
  summary: 'Get a transaction',
  description: prose`
    One transaction by its \`svc_tx_id\`: reconcile the outcome of a checkout here (and with the partner webhooks) from
    your backend, never from the frontend's success callback alone. A partner key reads its own partner's transactions
    only (another partner's is 404 TX_NOT_FOUND); a platform key reads any. Fee fields are null until the payment
    succeeds.
  `,
  tag: 'Transactions',
  responses: {
    200: { description: 'The transaction', schema: Transaction },
  },
  errors: ['PARTNER_NOT_FOUND', 'TX_NOT_FOUND'],
};
