/** Request schemas of the transaction routes (interface-spec.md; limits of decisions.md §5 and §9). */
import * as z from 'zod';
import { normalizeCurrency, parseAmount } from '../domain/money';
import { TRANSACTION_STATUSES } from '../domain/transaction';
import { PAYMENT_INTENT_ID } from '../use-cases/ports/processor';
import type { TransactionFilters } from '../domain/transaction';
import type { NewCheckout } from '../use-cases/transactions';
import { exceededLimit, isJsonObject, type JsonObject } from './json-limits';
import { clientIdentifier, instant, PageQuery, text } from './schemas';

/**
 * `meta`: any JSON object within decisions.md §5's limits, kept exactly as sent (the object JSON.parse made,
 * not a copy, so keys such as `__proto__` survive). The limits are checked without recursion or serialising,
 * and the check stops at the first one passed.
 */
const meta = z.custom<JsonObject>(isJsonObject, 'Must be a JSON object').meta({ type: 'object', description: 'Any JSON object: at most 50 keys, 32 levels deep and 4,096 bytes; returned exactly as sent' }).superRefine((value, ctx) => {
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
  .refine((value) => value.length <= PROCESSOR_METADATA_VALUE_MAX, `At most ${PROCESSOR_METADATA_VALUE_MAX} UTF-16 code units (an emoji takes 2)`)
  .meta({
    description:
      "Your own immutable reference of the payment (e.g. the order id), sent to the processor in the intent's metadata: 1-255 characters and at most 500 UTF-16 units (250 emoji fit), no control characters or bidi controls, no whitespace at either end (refused, not trimmed)",
    example: 'order-8841',
  });

const paymentFields = {
  partner_id: z
    .string()
    .min(1)
    .max(64)
    .meta({ description: "The partner the payment is for: a partner key's own partner (another is 403 API_KEY_SCOPE_FORBIDDEN); a platform key may name any", example: 'ptr_0f3k9m2p7q8r1s4t5v6w7x8y' }),
  client_id: clientIdentifier.meta({ description: "The merchant's `client_id`, as registered with `POST /clients` under that partner", example: 'merchant-001' }),
  // The rules the document can show are checked here too (same messages); the rest with the currency, in `withMoney`.
  amount: z.number().positive({ error: 'amount must be greater than 0' }).meta({
    description:
      'Positive, in major units of the currency (49.99 USD), with no more decimals than the currency has (JPY 0, USD 2, KWD 3) and at most 99,999,999 minor units; written as the number it is (`1.000000000000000000001` is refused)',
    example: 49.99,
  }),
  currency: z.string().regex(/^[A-Za-z]{3}$/, { error: 'Must be an active ISO 4217 currency code' }).meta({ description: 'An active ISO 4217 code, any case; stored and returned upper-case', example: 'USD' }),
  partner_reference: partnerReference,
  meta: meta.optional().meta({
    description:
      'Optional: any JSON object of at most 50 keys, 32 levels and 4,096 bytes serialised (UTF-8); stored on the transaction exactly as sent and replayed in partner webhooks',
    example: { cart: 'c-1' },
  }),
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
    email: z.email().meta({ description: "The buyer's e-mail address: the processor's `receipt_email`", example: 'buyer@example.com' }),
    statement_descriptor_suffix: z
      .string()
      .regex(/^[A-Za-z0-9 _.-]{1,22}$/, '1-22 characters: letters, digits, space, "-", "_", "."')
      .optional()
      .meta({ description: "Optional: what the buyer's card statement shows after your descriptor: 1-22 letters, digits, spaces, `-`, `_` or `.`", example: 'ORDER 8841' }),
  })
  .transform(withMoney);

/** A checkout body that succeeds for the partner `ptr_0f3k…` (its own key) with its active client `merchant-001` (docs/checkout.md). */
export const CHECKOUT_EXAMPLE = {
  partner_id: 'ptr_0f3k9m2p7q8r1s4t5v6w7x8y',
  client_id: 'merchant-001',
  amount: 49.99,
  currency: 'USD',
  email: 'buyer@example.com',
  partner_reference: 'order-8841',
  statement_descriptor_suffix: 'ORDER 8841',
  meta: { cart: 'c-1' },
};

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
  svc_tx_id: z
    .string()
    .min(1)
    .max(64)
    .meta({ description: 'The `svc_tx_id` that `POST /transactions/initialize` answered', example: 'svc_tx_0f3k9m2p7q8r1s4t5v6w7x8y' }),
  processor_payment_intent_id: z
    .string()
    .regex(PAYMENT_INTENT_ID, 'Not a payment intent id')
    .meta({
      description: "The id of a payment intent you created at the service's processor account, in the transaction's amount and currency",
      example: 'pi_3QxYz0123456789abcdefghij',
    }),
});

/** The filters of a transaction list, shared by `GET /transactions` and the admin search. */
const listFilters = {
  status: z.enum(TRANSACTION_STATUSES).optional().meta({ description: 'Only transactions in this status', example: 'succeeded' }),
  client_id: z.string().min(1).max(128).optional().meta({ description: "Only this merchant's transactions (its `client_id`)", example: 'merchant-001' }),
  partner_reference: z.string().min(1).max(255).optional().meta({ description: 'Only transactions with this `partner_reference` (exact match)', example: 'order-8841' }),
  partner_id: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .meta({ description: "Platform keys: only this partner's transactions (else every partner's). A partner key may name only its own partner (else 403 API_KEY_SCOPE_FORBIDDEN)" }),
  created_from: instant.optional().meta({
    description: 'Only transactions created at or after this instant: an ISO 8601 date `YYYY-MM-DD` (its 00:00 UTC) or date-time with `Z` or an offset `±HH:MM`',
    example: '2026-11-01',
  }),
  created_to: instant.optional().meta({
    description: 'Only transactions created at or before this instant (inclusive; not before `created_from`): an ISO 8601 date (its 00:00 UTC) or date-time with `Z` or an offset',
    example: '2026-11-30T23:59:59Z',
  }),
};

/** `created_to` not before `created_from`. */
const withCreatedRangeInOrder = <S extends z.ZodObject>(schema: S) =>
  schema.refine(
    (query) => {
      const { created_from: from, created_to: to } = query as { created_from?: string; created_to?: string };
      return from === undefined || to === undefined || from <= to;
    },
    { path: ['created_to'], message: 'Must not be before created_from' },
  );

export const TransactionListQuery = withCreatedRangeInOrder(PageQuery.extend(listFilters));

/** `GET /admin/transactions`: the same filters over every partner, and one transaction by its `svc_tx_id`. */
export const AdminTransactionListQuery = withCreatedRangeInOrder(
  PageQuery.extend({
    ...listFilters,
    partner_id: listFilters.partner_id.meta({ description: "Only this partner's transactions (else every partner's)", example: 'ptr_0f3k9m2p7q8r1s4t5v6w7x8y' }),
    svc_tx_id: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .meta({ description: 'Only the transaction with this `svc_tx_id` (exact; at most one item, which the other filters still apply to)', example: 'svc_tx_0f3k9m2p7q8r1s4t5v6w7x8y' }),
  }),
);

/** A list query's filters as the store names them. */
export const toTransactionFilters = (query: z.output<typeof AdminTransactionListQuery> | z.output<typeof TransactionListQuery>): TransactionFilters => ({
  status: query.status,
  clientId: query.client_id,
  partnerReference: query.partner_reference,
  createdFrom: query.created_from,
  createdTo: query.created_to,
  svcTxId: 'svc_tx_id' in query ? query.svc_tx_id : undefined,
});

export const TransactionParams = z.object({
  svc_tx_id: z.string().min(1).max(64).meta({ description: "The transaction's `svc_tx_id` (`svc_tx_` + 24 characters)", example: 'svc_tx_0f3k9m2p7q8r1s4t5v6w7x8y' }),
});
