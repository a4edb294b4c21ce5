/**
 * The processor port on the real `stripe` SDK. Locally `PROCESSOR_API_BASE` points the SDK at the sandbox
 * processor (`infra/local/sandbox/processor/`); in AWS it is unset and the SDK talks to Stripe. The client is created on first use
 * (the keys may come from Secrets Manager), and again when the secret key changes, so a missing key is reported
 * per request (500 PROCESSOR_KEY_MISSING) rather than as a crash. Every call is bounded by the deadline of the
 * request it serves (`lib/deadline.ts`).
 */
import Stripe from 'stripe';
import { timeLeftMs } from '../deadline';
import { errors, ServiceError } from '../domain/errors';
import { normalizeCurrency } from '../domain/money';
import { intentOutcomeEvent } from './event-objects';
import { verifyStripeEvent } from './events';
import { publishableKeyFrom, type LoadProcessorKeys } from './keys';
import { type NewPaymentIntent, type PaymentIntent, type PaymentParameter, type Processor, ProcessorRefusedParameter } from '../use-cases/ports/processor';
import { fromStripeAmount, toStripeAmount } from './stripe-amounts';

function connectionOptions(apiBase: string | undefined) {
  if (apiBase === undefined) return {};
  const url = new URL(apiBase);
  const protocol = url.protocol === 'http:' ? ('http' as const) : ('https' as const);
  return { host: url.hostname, port: url.port === '' ? (protocol === 'http' ? 80 : 443) : Number(url.port), protocol };
}

/**
 * The Stripe parameters the service fills from the partner's request -> the port's names for them. The
 * metadata values `partner_reference`, `partner_id` and `client_id` are the partner's too; `svc_tx_id`, and every
 * parameter not listed, the service sets itself.
 */
const PARAMETER_OF_PARAM = new Map<string, PaymentParameter>([
  ['amount', 'amount'],
  ['currency', 'currency'],
  ['receipt_email', 'receiptEmail'],
  ['statement_descriptor_suffix', 'statementDescriptorSuffix'],
  ['metadata[partner_reference]', 'metadata.partner_reference'],
  ['metadata[partner_id]', 'metadata.partner_id'],
  ['metadata[client_id]', 'metadata.client_id'],
  ['intent', 'paymentIntentId'],
]);

/**
 * Stripe's error codes that refuse a value of the payment itself (its amount, the buyer's e-mail, characters
 * a descriptor cannot print), never the shape of the request the service built.
 */
const PAYMENT_VALUE_CODES = new Set(['amount_too_small', 'amount_too_large', 'invalid_charge_amount', 'email_invalid', 'invalid_characters']);

/**
 * A refusal caused by what the partner sent is the port's {@link ProcessorRefusedParameter} (which the use case
 * answers with a 400: decisions.md §3, no 500 for caller input): naming the value when Stripe names a parameter
 * filled from it (a minimum charge amount, a descriptor Stripe will not print), naming none when Stripe refuses a
 * payment value without naming one. Anything else (an unknown, missing or conflicting parameter, a value the
 * service made itself) is the service's own bug: `undefined`, and the refusal stays a 500.
 */
function refusedParameter(error: InstanceType<typeof Stripe.errors.StripeInvalidRequestError>): ProcessorRefusedParameter | undefined {
  const parameter = error.param === undefined ? undefined : PARAMETER_OF_PARAM.get(error.param);
  if (parameter !== undefined) return new ProcessorRefusedParameter(parameter, error.message, 'processor');
  if (error.code !== undefined && PAYMENT_VALUE_CODES.has(error.code)) return new ProcessorRefusedParameter(undefined, error.message, 'processor');
  return undefined;
}

/**
 * An intent in a currency the service does not take, or whose amount is no whole number of ISO minor units, has
 * no amount it could match (NaN equals nothing). Stripe writes currencies lower-case (`usd`): normalised here.
 */
const toPaymentIntent = (intent: Stripe.PaymentIntent): PaymentIntent => {
  const currency = normalizeCurrency(intent.currency);
  const amount = currency === undefined ? undefined : fromStripeAmount(intent.amount, currency);
  return {
    id: intent.id,
    status: intent.status,
    amountMinor: amount?.ok === true ? amount.minor : Number.NaN,
    currency,
    clientSecret: intent.client_secret ?? '',
    metadata: intent.metadata,
    outcomeEvent: intentOutcomeEvent(intent),
  };
};

/** Stripe's idempotency key for the intent of one service transaction (derived, so every retry shares it). */
export const intentIdempotencyKey = (svcTxId: string) => `svc-intent-${svcTxId}`;

/** Stripe's idempotency key for the cancellation of one intent. */
export const cancelIdempotencyKey = (paymentIntentId: string) => `svc-cancel-${paymentIntentId}`;

/** `undefined` when Stripe does not know the intent the request names. */
async function unlessMissing(request: () => Promise<PaymentIntent>): Promise<PaymentIntent | undefined> {
  try {
    return await request();
  } catch (error) {
    if (error instanceof Stripe.errors.StripeInvalidRequestError && (error.statusCode === 404 || error.code === 'resource_missing')) return undefined;
    throw error;
  }
}

/** Stripe's limits for one call: each attempt's timeout, and the retries after it (when the deadline allows). */
const CALL_TIMEOUT_MS = 10_000;
const MAX_NETWORK_RETRIES = 2;
/** Time left after a failed call for the use case to answer with the processor's error before the cut-off. */
const ANSWER_MS = 1_000;
/** The longest Stripe waits before a first or second retry (0.5 s doubling, with jitter). */
const RETRY_DELAY_MS = 1_000;

/**
 * The request options that keep one call within `timeLeft`, the milliseconds to the request's deadline
 * (`undefined` outside a request: the client's own limits). Each attempt may take 10 s but must end
 * {@link ANSWER_MS} before the deadline, and Stripe retries only as often as whole further attempts still fit.
 * With no time left the call is not made: 502 PROCESSOR_UNAVAILABLE, which releases the idempotency key.
 */
function limitsWithin(timeLeft: number | undefined): Stripe.RequestOptions {
  if (timeLeft === undefined) return {};
  const budget = Math.floor(timeLeft - ANSWER_MS);
  if (budget < 1) throw errors.processorUnavailable(new Error(`No time left for a processor call (${timeLeft} ms to the deadline)`));
  const timeout = Math.min(CALL_TIMEOUT_MS, budget);
  const retries = Math.floor((budget - timeout) / (RETRY_DELAY_MS + timeout));
  return { timeout, maxNetworkRetries: Math.min(MAX_NETWORK_RETRIES, retries) };
}

export interface StripeProcessorOptions {
  /** Unset in AWS (Stripe itself); locally the sandbox processor. */
  apiBase: string | undefined;
  loadKeys: LoadProcessorKeys;
}

export function createStripeProcessor(options: StripeProcessorOptions): Processor {
  let client: { secretKey: string; stripe: Stripe } | undefined;
  const stripe = async () => {
    const { secretKey } = await options.loadKeys();
    if (secretKey === undefined) throw errors.processorKeyMissing();
    if (client?.secretKey !== secretKey) {
      client = {
        secretKey,
        stripe: new Stripe(secretKey, {
          ...connectionOptions(options.apiBase),
          maxNetworkRetries: MAX_NETWORK_RETRIES,
          timeout: CALL_TIMEOUT_MS,
          appInfo: { name: 'partner-payments-service' },
        }),
      };
    }
    return client.stripe;
  };

  /** Runs one SDK request with the limits the request's deadline leaves, and maps its failures. */
  const call = async <T>(request: (limits: Stripe.RequestOptions) => Promise<T>): Promise<T> => {
    try {
      return await request(limitsWithin(timeLeftMs()));
    } catch (error) {
      if (error instanceof ServiceError || error instanceof ProcessorRefusedParameter) throw error;
      if (error instanceof Stripe.errors.StripeInvalidRequestError) throw refusedParameter(error) ?? error;
      // Stripe answered with a failure the request cannot fix: the partner should retry (the 5xx frees its key). A
      // card error on a call that carries no card (creating an unconfirmed intent) is the processor's own refusal.
      if (
        error instanceof Stripe.errors.StripeConnectionError ||
        error instanceof Stripe.errors.StripeAPIError ||
        error instanceof Stripe.errors.StripeRateLimitError ||
        error instanceof Stripe.errors.StripeCardError
      ) {
        throw errors.processorUnavailable(error);
      }
      // Anything else (a parameter the processor does not know, a key it refuses) is the service's own fault: 500.
      throw error;
    }
  };

  return {
    createPaymentIntent: (intent: NewPaymentIntent) =>
      call(async (limits) => {
        const amount = toStripeAmount(intent.amountMinor, intent.currency);
        if (!amount.ok) throw new ProcessorRefusedParameter('amount', amount.reason, 'adapter');
        return toPaymentIntent(
          await (await stripe()).paymentIntents.create(
            {
              amount: amount.amount,
              currency: intent.currency.toLowerCase(),
              receipt_email: intent.receiptEmail,
              ...(intent.statementDescriptorSuffix === undefined ? {} : { statement_descriptor_suffix: intent.statementDescriptorSuffix }),
              metadata: intent.metadata,
              automatic_payment_methods: { enabled: true },
            },
            { idempotencyKey: intentIdempotencyKey(intent.svcTxId), ...limits },
          ),
        );
      }),
    retrievePaymentIntent: (id: string) => call((limits) => unlessMissing(async () => toPaymentIntent(await (await stripe()).paymentIntents.retrieve(id, undefined, limits)))),
    cancelPaymentIntent: (id: string) =>
      call((limits) =>
        unlessMissing(async () => {
          const client = await stripe();
          try {
            return toPaymentIntent(await client.paymentIntents.cancel(id, { cancellation_reason: 'abandoned' }, { idempotencyKey: cancelIdempotencyKey(id), ...limits }));
          } catch (error) {
            // Stripe refuses to cancel an intent that succeeded, is processing, or is canceled already: what it has is the answer.
            if (error instanceof Stripe.errors.StripeInvalidRequestError && error.code === 'payment_intent_unexpected_state') {
              return toPaymentIntent(await client.paymentIntents.retrieve(id, undefined, limits));
            }
            throw error;
          }
        }),
      ),
    publishableKey: publishableKeyFrom(options.loadKeys),
    verifyEvent: async (rawBody: string, signatureHeader: string | undefined) => {
      // A missing header is refused before the keys are read: an unsigned request costs no secret lookup.
      if (signatureHeader === undefined || signatureHeader.trim() === '') throw errors.processorSignatureMissing();
      const { webhookSecret } = await options.loadKeys();
      return verifyStripeEvent(rawBody, signatureHeader, webhookSecret);
    },
  };
}
