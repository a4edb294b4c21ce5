/**
 * What happens to a succeeded payment's charge afterwards: refunds (Stripe's `POST /v1/refunds`, full or
 * partial, by PaymentIntent or by charge) and the sandbox-only dispute triggers: the cardholder charges back
 * (all or part of what was not refunded, at a fee), and the card network decides the dispute (won or lost).
 */
import { randomId } from './events';
import { invalidRequest, noSuchResource } from './errors';
import type { FormHash } from './form';
import { intentFromPath, unexpectedState, type ApiResult, type RequestContext } from './intents';
import {
  now,
  type SandboxBalanceTransaction,
  type SandboxCharge,
  type SandboxDispute,
  type SandboxObjects,
  type SandboxRefund,
} from './objects';
import { Params } from './params';

const REFUND_REASONS = ['duplicate', 'fraudulent', 'requested_by_customer'] as const;
/** How the card network can decide a dispute (`POST /sandbox/disputes/:id/close`). */
const DISPUTE_OUTCOMES = ['won', 'lost'] as const;
/** Stripe's dispute fee in the US ($15.00), taken with the disputed amount unless the trigger names another. */
const DEFAULT_DISPUTE_FEE = 1_500;

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
  context.emit('charge.refunded', objects.chargeObject(charge));
  return { status: 200, body: refund };
}

/**
 * Sandbox-only: the cardholder disputes a succeeded payment (as Stripe's test card 0259 would): `amount`, by
 * default all that was not refunded, is withdrawn from the balance with the dispute `fee`, in one balance
 * transaction, as Stripe withdraws them.
 */
export function createDispute(objects: SandboxObjects, intentId: string, form: FormHash, context: RequestContext): ApiResult {
  const params = new Params(form, ['amount', 'fee']);
  const requested = params.optionalInteger('amount', 1);
  const fee = params.optionalInteger('fee', 0) ?? DEFAULT_DISPUTE_FEE;
  const intent = intentFromPath(objects, intentId);
  const charge = intent.latest_charge === null ? undefined : objects.charges.get(intent.latest_charge);
  if (intent.status !== 'succeeded' || charge === undefined) {
    throw unexpectedState(intent, `Only a succeeded PaymentIntent can be disputed; this one has a status of ${intent.status}.`);
  }
  if (charge.disputed) throw invalidRequest(`Charge ${charge.id} has already been disputed.`, { code: 'charge_disputed' });
  if (charge.refunded) throw invalidRequest(`Charge ${charge.id} has been fully refunded; it cannot be disputed.`, { code: 'charge_already_refunded' });
  const amount = disputedAmount(charge, requested);
  const created = now();
  const dispute: SandboxDispute = {
    id: randomId('dp_'),
    object: 'dispute',
    amount,
    balance_transactions: [],
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
  dispute.balance_transactions.push(disputeWithdrawal(dispute, fee));
  objects.disputes.set(dispute.id, dispute);
  charge.disputed = true;
  // A dispute comes from the card network, not from an API request: Stripe's event has no request.
  context.emit('charge.dispute.created', dispute, { fromApiRequest: false });
  return { status: 200, body: dispute };
}

/** A cardholder can dispute only what is left of the charge after its refunds: all of it unless they name less. */
function disputedAmount(charge: SandboxCharge, requested: number | undefined): number {
  const remaining = charge.amount - charge.amount_refunded;
  if (requested === undefined) return remaining;
  if (requested > remaining) {
    throw invalidRequest(`Dispute amount (${requested}) is greater than the unrefunded amount on charge ${charge.id} (${remaining}).`, {
      param: 'amount',
      code: 'amount_too_large',
    });
  }
  return requested;
}

/**
 * Sandbox-only: the card network decides a dispute. Won, the disputed amount comes back in a balance transaction
 * after the withdrawal's (the fee does not come back, as at Stripe); lost, the withdrawal stands. Either way the dispute is closed
 * for good and `charge.dispute.closed` carries it.
 */
export function closeDispute(objects: SandboxObjects, disputeId: string, form: FormHash, context: RequestContext): ApiResult {
  const params = new Params(form, ['status']);
  const status = params.requiredEnum('status', DISPUTE_OUTCOMES);
  const dispute = objects.disputes.get(disputeId);
  if (dispute === undefined) throw noSuchResource('dispute', disputeId, 'dispute', 404);
  if (dispute.status !== 'needs_response') {
    // The sandbox's own code (no Stripe page documents it, so no doc_url): a decision cannot be taken back.
    throw invalidRequest(`Dispute ${dispute.id} has already been closed (${dispute.status}).`, { extra: { code: 'dispute_already_closed' } });
  }
  dispute.status = status;
  if (status === 'won') dispute.balance_transactions.push(disputeReinstatement(dispute, now()));
  // Like its creation, the network's decision is not an API request.
  context.emit('charge.dispute.closed', dispute, { fromApiRequest: false });
  return { status: 200, body: dispute };
}

/** The balance transaction that opens a dispute: the disputed amount and the fee leave the balance at once. */
function disputeWithdrawal(dispute: SandboxDispute, fee: number): SandboxBalanceTransaction {
  return {
    ...disputeTransaction(dispute, dispute.created),
    amount: -dispute.amount,
    description: `Chargeback withdrawal for ${dispute.charge}`,
    fee,
    fee_details: [{ amount: fee, application: null, currency: dispute.currency, description: 'Dispute fee', type: 'stripe_fee' }],
    net: -dispute.amount - fee,
    reporting_category: 'dispute',
  };
}

/** A won dispute's balance transaction: the disputed amount comes back, without a fee. */
function disputeReinstatement(dispute: SandboxDispute, created: number): SandboxBalanceTransaction {
  return {
    ...disputeTransaction(dispute, created),
    amount: dispute.amount,
    description: `Chargeback reversal for ${dispute.charge}`,
    fee: 0,
    fee_details: [],
    net: dispute.amount,
    reporting_category: 'dispute_reversal',
  };
}

/** What a dispute's balance transactions share: available at once, in the dispute's currency, caused by it. */
function disputeTransaction(dispute: SandboxDispute, created: number) {
  return {
    id: randomId('txn_'),
    object: 'balance_transaction',
    available_on: created,
    balance_type: 'payments',
    created,
    currency: dispute.currency,
    exchange_rate: null,
    source: dispute.id,
    status: 'available',
    type: 'adjustment',
  } as const;
}
