/**
 * What the publishable key may do at the processor sandbox, as at Stripe: retrieve a PaymentIntent
 * (`GET /v1/payment_intents/:id?client_secret=...`) and confirm it (`POST /v1/payment_intents/:id/confirm` with
 * `client_secret`), naming the intent's own client secret; every other call is refused. What it reads back is
 * the subset Stripe marks "retrievable with publishable key": never `metadata`, nor the charge, the amounts
 * received or the statement descriptors.
 */
import { ApiError, invalidRequest, type StripeErrorBody } from './errors';
import type { FormHash } from './form';
import { intentFromPath } from './intents';
import { sameSecret } from './keys';
import type { SandboxObjects, SandboxPaymentIntent, SandboxPaymentMethod } from './objects';
import { missingParam } from './params';

/** Stripe's answer to a publishable key on a call it may not make (401, which SDKs raise as an authentication error). */
export function publishableKeyRefused(): ApiError {
  return invalidRequest(
    'This API call cannot be made with a publishable API key. Please use a secret API key. You can find a list of your API keys at https://dashboard.stripe.com/account/apikeys.',
    { status: 401 },
  );
}

/**
 * Checks that `client_secret` names the intent of the path (404 for an unknown intent first, as the secret key
 * gets) and returns the parameters without it, for the handler, which takes the secret key's parameters.
 */
export function withClientSecretChecked(objects: SandboxObjects, intentId: string, form: FormHash): FormHash {
  const { client_secret: given, ...rest } = form;
  const intent = intentFromPath(objects, intentId);
  if (given === undefined || given === '') throw missingParam('client_secret');
  if (typeof given !== 'string' || !sameSecret(given, intent.client_secret)) {
    throw invalidRequest('The client_secret provided does not match the client_secret associated with the PaymentIntent.', {
      param: 'client_secret',
      code: 'payment_intent_invalid_parameter',
    });
  }
  return Object.assign(Object.create(null) as FormHash, rest);
}

/** A handler's answer as the publishable key sees it: the intent (or the intent an error carries) restricted. */
export function publishableBody(body: unknown): unknown {
  if (isIntent(body)) return publishableIntent(body);
  if (typeof body === 'object' && body !== null && 'error' in body) {
    return { ...body, error: publishableError((body as { error: StripeErrorBody }).error) };
  }
  return body;
}

/** A refusal as the publishable key sees it (a refusal of a confirm carries the intent). */
export function publishableRefusal(error: ApiError): ApiError {
  return new ApiError(error.status, publishableError(error.body));
}

function publishableError(error: StripeErrorBody): StripeErrorBody {
  const restricted: StripeErrorBody = { ...error };
  if (isIntent(error.payment_intent)) restricted.payment_intent = publishableIntent(error.payment_intent);
  if (isPaymentMethod(error.payment_method)) restricted.payment_method = publishablePaymentMethod(error.payment_method);
  return restricted;
}

/** The fields of a PaymentIntent that Stripe returns to a publishable key. */
function publishableIntent(intent: SandboxPaymentIntent) {
  return {
    id: intent.id,
    object: intent.object,
    amount: intent.amount,
    automatic_payment_methods: intent.automatic_payment_methods,
    canceled_at: intent.canceled_at,
    cancellation_reason: intent.cancellation_reason,
    capture_method: intent.capture_method,
    client_secret: intent.client_secret,
    confirmation_method: intent.confirmation_method,
    created: intent.created,
    currency: intent.currency,
    description: intent.description,
    last_payment_error:
      intent.last_payment_error === null
        ? null
        : { ...intent.last_payment_error, payment_method: publishablePaymentMethod(intent.last_payment_error.payment_method) },
    livemode: intent.livemode,
    next_action: intent.next_action,
    payment_method: intent.payment_method,
    payment_method_types: [...intent.payment_method_types],
    receipt_email: intent.receipt_email,
    status: intent.status,
  };
}

function publishablePaymentMethod(method: SandboxPaymentMethod) {
  const { metadata: _metadata, customer: _customer, ...visible } = method;
  return { ...visible, card: { ...method.card } };
}

function isIntent(value: unknown): value is SandboxPaymentIntent {
  return typeof value === 'object' && value !== null && (value as { object?: unknown }).object === 'payment_intent';
}

function isPaymentMethod(value: unknown): value is SandboxPaymentMethod {
  return typeof value === 'object' && value !== null && (value as { object?: unknown }).object === 'payment_method';
}
