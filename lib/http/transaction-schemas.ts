/** Request schemas of the transaction routes (interface-spec.md; limits of decisions.md §5 and §9). */
import * as z from 'zod';
import { normalizeCurrency, parseAmount } from '../domain/money';
import { TRANSACTION_STATUSES } from '../domain/transaction';
import { PAYMENT_INTENT_ID } from '../processor/port';
import type { NewCheckout } from '../use-cases/transactions';
import { exceededLimit, isJsonObject, type JsonObject } from './json-limits';
import { clientIdentifier, instant, PageQuery, text } from './schemas';

/**
 * `meta`: any JSON object within decisions.md §5's limits, kept exactly as sent (the object JSON.parse made,
 * not a copy, so keys such as `__proto__` survive). The limits are checked without recursion or serialising,
 * and the check stops at the first one passed.
 */
const meta = z.custom<JsonObject>(isJsonObject, 'Must be a JSON object').superRefine((value, ctx) => {
  const exceeded = exceededLimit(value, { maxKeys: 50, maxDepth: 32, maxBytes: 4096 });
  if (exceeded !== undefined) ctx.addIssue({ code: 'custom', message: exceeded });
});

/**
 * Stripe keeps metadata values of at most 500 characters. Counted here in UTF-16 units, never fewer than code
 * points, so a value that passes fits however the processor counts.
 */
const PROCESSOR_METADATA_VALUE_MAX = 500;

/**
 * 1-255 characters (zod counts strings in Unicode code points: an emoji is one), and at most 500 UTF-16 units, so
 * it always fits the processor's metadata, where it travels with the payment intent (255 emoji would be 510
 * units). Free text ({@link text}): kept exactly as sent, so whitespace at either end is refused, not trimmed.
 */
const partnerReference = text(1, 255)
  .refine((value) => value.length <= PROCESSOR_METADATA_VALUE_MAX, `At most ${PROCESSOR_METADATA_VALUE_MAX} UTF-16 code units (an emoji takes 2)`);

const paymentFields = {
  partner_id: z.string().min(1).max(64),
  client_id: clientIdentifier,
  amount: z.number(),
  currency: z.string(),
  partner_reference: partnerReference,
  meta: meta.optional(),
};

/**
 * Amount and currency are checked together: the currency must be an active ISO 4217 code (any case), and the
 * amount positive, with no more decimals than the currency has, and at most 99,999,999 minor units. The result
 * carries the upper-case currency and the amount in minor units.
 */
function withMoney<T extends { amount: number; currency: string }>(body: T, ctx: z.RefinementCtx) {
  const currency = normalizeCurrency(body.currency);
  if (currency === undefined) {
    ctx.addIssue({ code: 'custom', path: ['currency'], message: 'Must be an active ISO 4217 currency code' });
    return z.NEVER;
  }
  const amount = parseAmount(body.amount, currency);
  if (!amount.ok) {
    ctx.addIssue({ code: 'custom', path: ['amount'], message: amount.reason });
    return z.NEVER;
  }
  return { ...body, currency, amountMinor: amount.minor };
}

export const InitializeBody = z.strictObject(paymentFields).transform(withMoney);

export const CheckoutBody = z
  .strictObject({
    ...paymentFields,
    email: z.email(),
    statement_descriptor_suffix: z
      .string()
      .regex(/^[A-Za-z0-9 _.-]{1,22}$/, '1-22 characters: letters, digits, space, "-", "_", "."')
      .optional(),
  })
  .transform(withMoney);

/** A validated checkout body as the use case takes it (checkout-intent and -v2 share it). */
export const toNewCheckout = (body: z.output<typeof CheckoutBody>): NewCheckout => ({
  partnerId: body.partner_id,
  clientId: body.client_id,
  amountMinor: body.amountMinor,
  currency: body.currency,
  email: body.email,
  partnerReference: body.partner_reference,
  statementDescriptorSuffix: body.statement_descriptor_suffix,
  meta: body.meta,
});

export const AttachIntentBody = z.strictObject({
  svc_tx_id: z.string().min(1).max(64),
  processor_payment_intent_id: z.string().regex(PAYMENT_INTENT_ID, 'Not a payment intent id'),
});

export const TransactionListQuery = PageQuery.extend({
  status: z.enum(TRANSACTION_STATUSES).optional(),
  client_id: z.string().min(1).max(128).optional(),
  partner_reference: z.string().min(1).max(255).optional(),
  partner_id: z.string().min(1).max(64).optional(),
  created_from: instant.optional(),
  created_to: instant.optional(),
}).refine((query) => query.created_from === undefined || query.created_to === undefined || query.created_from <= query.created_to, {
  path: ['created_to'],
  message: 'Must not be before created_from',
});

export const TransactionParams = z.object({ svc_tx_id: z.string().min(1).max(64) });
