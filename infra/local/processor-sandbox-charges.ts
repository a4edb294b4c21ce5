/**
 * What happens to a succeeded payment's charge afterwards: refunds (Stripe's `POST /v1/refunds`, full or
 * partial, by PaymentIntent or by charge) and the sandbox-only dispute trigger (the cardholder charges back).
 */
import { randomId } from './processor-sandbox-events';
import { invalidRequest, noSuchResource } from './processor-sandbox-errors';
import type { FormHash } from './processor-sandbox-form';
import { intentFromPath, unexpectedState, type ApiResult, type RequestContext } from './processor-sandbox-intents';
import { now, type SandboxCharge, type SandboxDispute, type SandboxObjects, type SandboxRefund } from './processor-sandbox-objects';
import { Params } from './processor-sandbox-params';

const REFUND_REASONS = ['duplicate', 'fraudulent', 'requested_by_customer'] as const;

/**
 * Refunds the charge named, or the intent's latest charge; without `amount`, what remains of it. Only a full
 * refund marks the charge `refunded`; a charged-back charge cannot be refunded.
 */
export function createRefund(objects: SandboxObjects, form: FormHash, context: RequestContext): ApiResult {
  const params = new Params(form, ['payment_intent', 'charge', 'amount', 'reason', 'metadata']);
  const intentId = params.optionalString('payment_intent');
  const chargeId = params.optionalString('charge');
  const requested = params.optionalInteger('amount', 1);
  const reason = params.optionalEnum('reason', REFUND_REASONS);
  const metadata = params.optionalMetadata('metadata') ?? {};
  if ((intentId === undefined || intentId === '') && (chargeId === undefined || chargeId === '')) {
    throw invalidRequest('One of the following params should be provided for this request: payment_intent or charge.', { code: 'parameter_missing' });
  }
  let charge: SandboxCharge | undefined;
  if (chargeId !== undefined && chargeId !== '') {
    charge = objects.charges.get(chargeId);
    if (charge === undefined) throw noSuchResource('charge', chargeId, 'charge', 400);
    if (intentId !== undefined && intentId !== '' && charge.payment_intent !== intentId) {
      throw invalidRequest(`The charge ${chargeId} does not belong to the PaymentIntent ${intentId}.`, { param: 'charge' });
    }
    if (charge.status !== 'succeeded') {
      throw invalidRequest(`Charge ${charge.id} has not succeeded, so it cannot be refunded.`, { param: 'charge', code: 'charge_not_refundable' });
    }
  } else if (intentId !== undefined) {
    const intent = objects.intents.get(intentId);
    if (intent === undefined) throw noSuchResource('payment_intent', intentId, 'payment_intent', 400);
    if (intent.status !== 'succeeded' || intent.latest_charge === null) {
      throw invalidRequest(`This PaymentIntent (${intent.id}) does not have a successful charge to refund (its status is ${intent.status}).`, {
        param: 'payment_intent',
        code: 'payment_intent_unexpected_state',
      });
    }
    charge = objects.charges.get(intent.latest_charge);
  }
  if (charge === undefined) throw new Error('a succeeded PaymentIntent without its charge');
  if (charge.disputed) {
    throw invalidRequest(`Charge ${charge.id} has been charged back; cannot issue a refund.`, { code: 'charge_disputed' });
  }
  const remaining = charge.amount - charge.amount_refunded;
  if (remaining === 0) throw invalidRequest(`Charge ${charge.id} has already been refunded.`, { code: 'charge_already_refunded' });
  const amount = requested ?? remaining;
  if (amount > remaining) {
    throw invalidRequest(`Refund amount (${amount}) is greater than unrefunded amount on charge (${remaining}).`, {
      param: 'amount',
      code: 'amount_too_large',
    });
  }

  const refund: SandboxRefund = {
    id: randomId('re_'),
    object: 'refund',
    amount,
    balance_transaction: null,
    charge: charge.id,
    created: now(),
    currency: charge.currency,
    metadata,
    payment_intent: charge.payment_intent,
    reason: reason ?? null,
    status: 'succeeded',
  };
  objects.refunds.set(refund.id, refund);
  charge.amount_refunded += amount;
  charge.refunded = charge.amount_refunded === charge.amount;
  context.emit('charge.refunded', charge);
  return { status: 200, body: refund };
}

/** Sandbox-only: the cardholder disputes a succeeded payment (as Stripe's test card 0259 would). */
export function createDispute(objects: SandboxObjects, intentId: string, form: FormHash, context: RequestContext): ApiResult {
  new Params(form, []); // takes no parameters: refuses any, as Stripe refuses unknown ones
  const intent = intentFromPath(objects, intentId);
  const charge = intent.latest_charge === null ? undefined : objects.charges.get(intent.latest_charge);
  if (intent.status !== 'succeeded' || charge === undefined) {
    throw unexpectedState(intent, `Only a succeeded PaymentIntent can be disputed; this one has a status of ${intent.status}.`);
  }
  if (charge.disputed) throw invalidRequest(`Charge ${charge.id} has already been disputed.`, { code: 'charge_disputed' });
  if (charge.refunded) throw invalidRequest(`Charge ${charge.id} has been fully refunded; it cannot be disputed.`, { code: 'charge_already_refunded' });
  const created = now();
  const dispute: SandboxDispute = {
    id: randomId('dp_'),
    object: 'dispute',
    amount: charge.amount,
    charge: charge.id,
    created,
    currency: charge.currency,
    evidence_details: { due_by: created + 7 * 24 * 60 * 60, has_evidence: false, past_due: false, submission_count: 0 },
    is_charge_refundable: false,
    livemode: false,
    metadata: {},
    payment_intent: intent.id,
    reason: 'fraudulent',
    status: 'needs_response',
  };
  objects.disputes.set(dispute.id, dispute);
  charge.disputed = true;
  // A dispute comes from the card network, not from an API request: Stripe's event has no request.
  context.emit('charge.dispute.created', dispute, { fromApiRequest: false });
  return { status: 200, body: dispute };
}
