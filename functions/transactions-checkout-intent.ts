/** POST /api/v1/transactions/checkout-intent: the transaction and its processor payment intent, in one call. */
import { httpRoute } from '../lib/http/chain';
import { CheckoutBody } from '../lib/http/transaction-schemas';
import type { HttpRequest } from '../lib/http/types';
import { processor } from '../lib/processor';
import * as transactions from '../lib/store/transactions';
import { type CheckoutResult, createCheckoutIntent, type TransactionDeps } from '../lib/use-cases/transactions';
import type { z } from 'zod';

export const presentCheckout = ({ transaction, intent, publishableKey }: CheckoutResult) => ({
  svc_tx_id: transaction.svcTxId,
  status: transaction.status,
  processor_payment_intent_id: intent.id,
  client_secret: intent.clientSecret,
  processor_publishable_key: publishableKey,
});

/** Runs the use case for a validated request (shared with checkout-intent-v2). */
export function checkout(deps: TransactionDeps, { caller, body, idempotency }: HttpRequest<z.output<typeof CheckoutBody>, unknown, unknown>) {
  if (idempotency === undefined) throw new Error('checkout needs the idempotency step of the chain');
  return createCheckoutIntent(
    deps,
    caller,
    {
      partnerId: body.partner_id,
      clientId: body.client_id,
      amountMinor: body.amountMinor,
      currency: body.currency,
      email: body.email,
      partnerReference: body.partner_reference,
      statementDescriptorSuffix: body.statement_descriptor_suffix,
      meta: body.meta,
    },
    idempotency,
  );
}

export const createHandler = (deps: TransactionDeps) =>
  httpRoute({ access: 'partner-mutation', body: CheckoutBody }, async (request) => ({
    status: 201,
    body: presentCheckout(await checkout(deps, request)),
  }));

export const handler = createHandler({ processor, transactions });
