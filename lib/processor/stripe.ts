/**
 * The processor port on the real `stripe` SDK. Locally `PROCESSOR_API_BASE` points the SDK at the sandbox
 * processor (`infra/local`); in AWS it is unset and the SDK talks to Stripe. The client is created once, on
 * first use (the keys may come from Secrets Manager), so a missing key is reported per request (500
 * PROCESSOR_KEY_MISSING) rather than as a crash.
 */
import Stripe from 'stripe';
import { errors, fieldValidationError, ServiceError } from '../domain/errors';
import { normalizeCurrency } from '../domain/money';
import type { LoadProcessorKeys } from './keys';
import type { NewPaymentIntent, PaymentIntent, Processor } from './port';
import { fromStripeAmount, toStripeAmount } from './stripe-amounts';

function connectionOptions(apiBase: string | undefined) {
  if (apiBase === undefined) return {};
  const url = new URL(apiBase);
  const protocol = url.protocol === 'http:' ? ('http' as const) : ('https' as const);
  return { host: url.hostname, port: url.port === '' ? (protocol === 'http' ? 80 : 443) : Number(url.port), protocol };
}

/** Stripe's parameter names -> the request fields partners sent. */
const FIELD_OF_PARAM: Record<string, string> = {
  amount: 'amount',
  currency: 'currency',
  receipt_email: 'email',
  statement_descriptor_suffix: 'statement_descriptor_suffix',
  intent: 'processor_payment_intent_id',
};

/**
 * Stripe refused a value the service passed on from the partner (a minimum charge amount, a descriptor Stripe
 * will not print): that is the caller's input, so a 400 VALIDATION_ERROR on the field, never a 500.
 */
function refusedParameter(error: InstanceType<typeof Stripe.errors.StripeInvalidRequestError>): ServiceError | undefined {
  const field = error.param === undefined ? undefined : FIELD_OF_PARAM[error.param];
  if (field === undefined) return undefined;
  return fieldValidationError(field, `Refused by the card processor: ${error.message}`, 'The card processor refused the request');
}

/** An intent in a currency the service does not take has no amount it could match (NaN equals nothing). */
const toPaymentIntent = (intent: Stripe.PaymentIntent): PaymentIntent => {
  const currency = normalizeCurrency(intent.currency);
  return {
    id: intent.id,
    status: intent.status,
    amountMinor: currency === undefined ? Number.NaN : fromStripeAmount(intent.amount, currency),
    currency: currency ?? intent.currency.toUpperCase(),
    clientSecret: intent.client_secret ?? '',
  };
};

/** Stripe's idempotency key for the intent of one service transaction (derived, so every retry shares it). */
export const intentIdempotencyKey = (svcTxId: string) => `svc-intent-${svcTxId}`;

export interface StripeProcessorOptions {
  /** Unset in AWS (Stripe itself); locally the sandbox processor. */
  apiBase: string | undefined;
  loadKeys: LoadProcessorKeys;
}

export function createStripeProcessor(options: StripeProcessorOptions): Processor {
  let client: Stripe | undefined;
  const stripe = async () => {
    const { secretKey } = await options.loadKeys();
    if (secretKey === undefined) throw errors.processorKeyMissing();
    client ??= new Stripe(secretKey, {
      ...connectionOptions(options.apiBase),
      maxNetworkRetries: 2,
      timeout: 10_000,
      appInfo: { name: 'partner-payments-service' },
    });
    return client;
  };

  const call = async <T>(request: () => Promise<T>): Promise<T> => {
    try {
      return await request();
    } catch (error) {
      if (error instanceof ServiceError) throw error;
      if (error instanceof Stripe.errors.StripeInvalidRequestError) throw refusedParameter(error) ?? error;
      // Stripe answered with a failure the request cannot fix: the partner should retry (the 5xx frees its key).
      if (error instanceof Stripe.errors.StripeConnectionError || error instanceof Stripe.errors.StripeAPIError || error instanceof Stripe.errors.StripeRateLimitError) {
        throw errors.processorUnavailable(error);
      }
      throw error;
    }
  };

  return {
    createPaymentIntent: (intent: NewPaymentIntent) =>
      call(async () => {
        const amount = toStripeAmount(intent.amountMinor, intent.currency);
        if (!amount.ok) throw fieldValidationError('amount', amount.reason);
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
            { idempotencyKey: intentIdempotencyKey(intent.svcTxId) },
          ),
        );
      }),
    retrievePaymentIntent: (id: string) =>
      call(async () => {
        try {
          return toPaymentIntent(await (await stripe()).paymentIntents.retrieve(id));
        } catch (error) {
          if (error instanceof Stripe.errors.StripeInvalidRequestError && (error.statusCode === 404 || error.code === 'resource_missing')) {
            return undefined;
          }
          throw error;
        }
      }),
    publishableKey: async () => {
      const { publishableKey } = await options.loadKeys();
      if (publishableKey === undefined) throw errors.processorPublishableMissing();
      return publishableKey;
    },
  };
}
