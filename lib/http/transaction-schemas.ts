/** Request schemas of the transaction routes (interface-spec.md; limits of decisions.md §5 and §9). */
import { z } from 'zod';
import { normalizeCurrency, parseAmount } from '../domain/money';
import { TRANSACTION_STATUSES } from '../domain/transaction';
import { PAYMENT_INTENT_ID } from '../processor/port';
import type { NewCheckout } from '../use-cases/transactions';
import { identifier, PageQuery } from './schemas';

const META_MAX_KEYS = 50;
const META_MAX_BYTES = 4096;

const meta = z
  .record(z.string(), z.unknown())
  .refine((value) => Object.keys(value).length <= META_MAX_KEYS, `At most ${META_MAX_KEYS} keys`)
  .refine((value) => Buffer.byteLength(JSON.stringify(value), 'utf8') <= META_MAX_BYTES, `At most ${META_MAX_BYTES} bytes serialised`);

const paymentFields = {
  partner_id: z.string().min(1).max(64),
  client_id: identifier(3, 128),
  amount: z.number(),
  currency: z.string(),
  partner_reference: z.string().trim().min(1).max(255),
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

/** An instant (ISO 8601 date or date-time), normalised to the stored form so that key ranges compare right. */
const instant = z
  .string()
  .refine((value) => /^\d{4}-\d{2}-\d{2}/.test(value) && !Number.isNaN(Date.parse(value)), 'Must be an ISO 8601 date or date-time')
  .transform((value) => new Date(value).toISOString());

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
