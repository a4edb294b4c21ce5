/**
 * The PaymentIntent state machine of the processor sandbox, as Stripe runs it for the calls the service makes:
 *
 *   create   -> requires_payment_method
 *   confirm  requires_payment_method -> succeeded (pm_card_visa; a succeeded charge)
 *            requires_payment_method -> requires_payment_method (pm_card_chargeDeclined; a failed charge, 402)
 *   cancel   requires_payment_method -> canceled
 *
 * Each handler checks its parameters and the intent's state before it changes anything (a refusal throws an
 * `ApiError` and leaves no trace), then changes the objects and emits its events in one synchronous step.
 */
import { randomId, type ProcessorEventType } from './events';
import { docUrl, invalidRequest, noSuchResource, type ApiError } from './errors';
import type { FormHash } from './form';
import {
  now,
  type SandboxCard,
  type SandboxCharge,
  type SandboxObjects,
  type SandboxPaymentError,
  type SandboxPaymentIntent,
  type SandboxPaymentMethod,
} from './objects';
import { missingParam, Params } from './params';

/** A handler's answer: it ran (changed state or not), so an idempotency key stores it. */
export interface ApiResult {
  status: number;
  body: unknown;
}

/** How a handler emits events (delivered once the response is sent). */
export interface RequestContext {
  emit(type: ProcessorEventType, object: unknown, options?: { fromApiRequest: boolean }): void;
}

/** Stripe's test PaymentMethods the sandbox knows. */
const TEST_CARDS: Record<string, { brand: string; last4: string; declineCode?: string }> = {
  pm_card_visa: { brand: 'visa', last4: '4242' },
  pm_card_chargeDeclined: { brand: 'visa', last4: '0002', declineCode: 'generic_decline' },
};

const CURRENCIES = new Set(Intl.supportedValuesOf('currency').map((code) => code.toLowerCase()));
/** Stripe's largest amount (in the currency's minor unit): $999,999.99 in USD. */
const MAX_AMOUNT = 99_999_999;
const CONFIRMABLE: readonly string[] = ['requires_payment_method', 'requires_confirmation'];
const CANCELABLE: readonly string[] = ['requires_payment_method', 'requires_capture', 'requires_confirmation', 'requires_action', 'processing'];
const CANCELLATION_REASONS = ['duplicate', 'fraudulent', 'requested_by_customer', 'abandoned'] as const;

/**
 * Refuses what Stripe refuses for the parameters the service sends, and what the sandbox does not implement
 * (`capture_method=manual`) rather than pretend; defaults as Stripe's current API version does.
 */
export function createIntent(objects: SandboxObjects, form: FormHash): ApiResult {
  const params = new Params(form, [
    'amount',
    'currency',
    'receipt_email',
    'statement_descriptor_suffix',
    'description',
    'metadata',
    'automatic_payment_methods',
    'payment_method_types',
    'capture_method',
  ]);
  const amount = params.requiredInteger('amount', 1);
  if (amount > MAX_AMOUNT) {
    throw invalidRequest(`Amount must be no more than ${MAX_AMOUNT} (in the currency's smallest unit).`, { param: 'amount', code: 'amount_too_large' });
  }
  const currency = params.requiredString('currency').toLowerCase();
  if (!CURRENCIES.has(currency)) throw invalidRequest(`Invalid currency: ${currency}.`, { param: 'currency' });
  const receiptEmail = params.optionalEmail('receipt_email');
  const suffix = params.optionalString('statement_descriptor_suffix');
  if (suffix !== undefined && suffix !== '') {
    if (suffix.length > 22) {
      throw invalidRequest('The statement descriptor suffix must be at most 22 characters long.', { param: 'statement_descriptor_suffix' });
    }
    if (/[<>\\'"*]/.test(suffix)) {
      throw invalidRequest('The statement descriptor suffix cannot contain any of the special characters < > \\ \' " *.', {
        param: 'statement_descriptor_suffix',
      });
    }
  }
  const description = params.optionalString('description', 1_000);
  const metadata = params.optionalMetadata('metadata') ?? {};
  const automatic = params.optionalHash('automatic_payment_methods', ['enabled', 'allow_redirects']);
  const automaticEnabled = automatic?.optionalBoolean('enabled');
  if (automatic !== undefined && automaticEnabled === undefined) throw missingParam('automatic_payment_methods[enabled]');
  const allowRedirects = automatic?.optionalEnum('allow_redirects', ['always', 'never'] as const);
  const types = params.optionalStringArray('payment_method_types');
  if (automaticEnabled === true && types !== undefined) {
    throw invalidRequest('You may only specify one of these parameters: automatic_payment_methods, payment_method_types.', {
      param: 'payment_method_types',
      code: 'parameters_exclusive',
    });
  }
  const captureMethod = params.optionalEnum('capture_method', ['automatic', 'automatic_async', 'manual'] as const);
  if (captureMethod === 'manual') {
    throw invalidRequest('The processor sandbox does not implement capture_method=manual (separate authorization and capture).', {
      param: 'capture_method',
    });
  }

  const id = randomId('pi_');
  const automaticPaymentMethods =
    types !== undefined && automaticEnabled !== true
      ? automaticEnabled === false
        ? { enabled: false }
        : null
      : { enabled: automaticEnabled ?? true, ...(allowRedirects !== undefined ? { allow_redirects: allowRedirects } : {}) };
  const intent: SandboxPaymentIntent = {
    id,
    object: 'payment_intent',
    amount,
    amount_capturable: 0,
    amount_received: 0,
    automatic_payment_methods: automaticPaymentMethods,
    canceled_at: null,
    cancellation_reason: null,
    capture_method: captureMethod ?? 'automatic_async',
    client_secret: `${id}_secret_${randomId('', 25)}`,
    confirmation_method: 'automatic',
    created: now(),
    currency,
    customer: null,
    description: description === undefined || description === '' ? null : description,
    last_payment_error: null,
    latest_charge: null,
    livemode: false,
    metadata,
    next_action: null,
    payment_method: null,
    payment_method_types: types ?? ['card'],
    receipt_email: receiptEmail ?? null,
    statement_descriptor: null,
    statement_descriptor_suffix: suffix === undefined || suffix === '' ? null : suffix,
    status: 'requires_payment_method',
  };
  objects.intents.set(id, intent);
  return { status: 200, body: intent };
}

/**
 * Takes `client_secret` and ignores it: the secret key reads any intent (a publishable-key read has it checked,
 * and taken out, first: `publishable.ts`).
 */
export function retrieveIntent(objects: SandboxObjects, id: string, query: FormHash): ApiResult {
  new Params(query, ['client_secret']);
  return { status: 200, body: intentFromPath(objects, id) };
}

/**
 * Charges the test card: a succeeded charge moves the intent to succeeded; a declined one leaves it awaiting
 * another payment method and answers 402. Both ran, so an idempotency key replays either.
 */
export function confirmIntent(objects: SandboxObjects, id: string, form: FormHash, context: RequestContext): ApiResult {
  const params = new Params(form, ['payment_method', 'receipt_email']);
  const paymentMethodId = params.optionalString('payment_method');
  const receiptEmail = params.optionalEmail('receipt_email');
  const intent = intentFromPath(objects, id);
  if (intent.status === 'succeeded') {
    throw unexpectedState(intent, 'You cannot confirm this PaymentIntent because it has already succeeded after being previously confirmed.');
  }
  if (!CONFIRMABLE.includes(intent.status)) {
    throw unexpectedState(
      intent,
      `You cannot confirm this PaymentIntent because it has a status of ${intent.status}. Only a PaymentIntent with one of the following statuses may be confirmed: ${CONFIRMABLE.join(', ')}.`,
    );
  }
  if (paymentMethodId === undefined || paymentMethodId === '') {
    throw unexpectedState(
      intent,
      "You cannot confirm this PaymentIntent because it's missing a payment method. You can either update the PaymentIntent with a payment method and then confirm it again, or confirm it again directly with a payment method.",
    );
  }
  const card = TEST_CARDS[paymentMethodId];
  if (card === undefined) throw noSuchResource('PaymentMethod', paymentMethodId, 'payment_method', 400);
  if (!intent.payment_method_types.includes('card')) {
    throw invalidRequest(
      `The PaymentMethod provided (card) is not allowed for this PaymentIntent. Please attach a PaymentMethod of one of the following types: ${intent.payment_method_types.join(', ')}. Alternatively update the allowed payment_method_types for this PaymentIntent to include "card".`,
      { param: 'payment_method', code: 'payment_intent_incompatible_payment_method' },
    );
  }

  const created = now();
  const cardDetails: SandboxCard = { brand: card.brand, last4: card.last4, exp_month: 12, exp_year: new Date().getUTCFullYear() + 3, funding: 'credit', country: 'US' };
  const paymentMethod: SandboxPaymentMethod = {
    id: randomId('pm_'),
    object: 'payment_method',
    type: 'card',
    card: cardDetails,
    created,
    customer: null,
    livemode: false,
    metadata: {},
  };
  if (receiptEmail !== undefined) intent.receipt_email = receiptEmail;
  const declined = card.declineCode !== undefined;
  const charge: SandboxCharge = {
    id: randomId('ch_'),
    object: 'charge',
    amount: intent.amount,
    amount_captured: declined ? 0 : intent.amount,
    amount_refunded: 0,
    captured: !declined,
    created,
    currency: intent.currency,
    description: intent.description,
    disputed: false,
    failure_code: declined ? 'card_declined' : null,
    failure_message: declined ? 'Your card was declined.' : null,
    livemode: false,
    metadata: { ...intent.metadata },
    outcome: declined
      ? {
          network_status: 'declined_by_network',
          reason: card.declineCode ?? null,
          risk_level: 'normal',
          seller_message: 'The bank did not return any further details with this decline.',
          type: 'issuer_declined',
        }
      : { network_status: 'approved_by_network', reason: null, risk_level: 'normal', seller_message: 'Payment complete.', type: 'authorized' },
    paid: !declined,
    payment_intent: intent.id,
    payment_method: paymentMethod.id,
    payment_method_details: { type: 'card', card: cardDetails },
    receipt_email: intent.receipt_email,
    refunded: false,
    statement_descriptor_suffix: intent.statement_descriptor_suffix,
    status: declined ? 'failed' : 'succeeded',
  };
  objects.charges.set(charge.id, charge);
  intent.latest_charge = charge.id;

  if (declined) {
    const error: SandboxPaymentError = {
      type: 'card_error',
      code: 'card_declined',
      decline_code: card.declineCode ?? 'generic_decline',
      message: 'Your card was declined.',
      charge: charge.id,
      doc_url: docUrl('card_declined'),
      payment_method: paymentMethod,
    };
    intent.status = 'requires_payment_method';
    intent.payment_method = null;
    intent.last_payment_error = error;
    context.emit('payment_intent.payment_failed', intent);
    return { status: 402, body: { error: { ...error, payment_intent: intent } } };
  }

  intent.status = 'succeeded';
  intent.amount_received = intent.amount;
  intent.payment_method = paymentMethod.id;
  intent.last_payment_error = null;
  context.emit('charge.succeeded', objects.chargeObject(charge));
  context.emit('payment_intent.succeeded', intent);
  return { status: 200, body: intent };
}

export function cancelIntent(objects: SandboxObjects, id: string, form: FormHash, context: RequestContext): ApiResult {
  const params = new Params(form, ['cancellation_reason']);
  const reason = params.optionalEnum('cancellation_reason', CANCELLATION_REASONS);
  const intent = intentFromPath(objects, id);
  if (!CANCELABLE.includes(intent.status)) {
    throw unexpectedState(
      intent,
      `You cannot cancel this PaymentIntent because it has a status of ${intent.status}. Only a PaymentIntent with one of the following statuses may be canceled: ${CANCELABLE.join(', ')}.`,
    );
  }
  intent.status = 'canceled';
  intent.canceled_at = now();
  intent.cancellation_reason = reason ?? null;
  context.emit('payment_intent.canceled', intent);
  return { status: 200, body: intent };
}

/** The intent a path names; Stripe answers an unknown one with 404 naming the `intent` parameter. */
export function intentFromPath(objects: SandboxObjects, id: string): SandboxPaymentIntent {
  const intent = objects.intents.get(id);
  if (intent === undefined) throw noSuchResource('payment_intent', id, 'intent', 404);
  return intent;
}

/** Stripe's refusal of a move the intent's status does not allow; it carries the intent as it is. */
export function unexpectedState(intent: SandboxPaymentIntent, message: string): ApiError {
  return invalidRequest(message, { code: 'payment_intent_unexpected_state', extra: { payment_intent: structuredClone(intent) } });
}
