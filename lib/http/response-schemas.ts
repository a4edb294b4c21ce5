/**
 * The API's response bodies as zod schemas: what the OpenAPI document shows, and what the tests hold every
 * answer of the service to (`test/support/contract.ts`). The presenters (`presenters.ts`,
 * `webhook-presenters.ts`) build exactly these shapes; the schemas are strict, so a field added there and not
 * here fails the tests.
 */
import * as z from 'zod';
import { AUDIT_EVENT_TYPES } from '../domain/audit';
import { DISPUTE_STATUSES, ENTRY_TYPES } from '../domain/ledger';
import { CLIENT_STATUSES, KYC_STATUSES, PARTNER_STATUSES } from '../domain/partner';
import { BATCH_STATUSES } from '../domain/settlement';
import { SETTLEMENT_STATUSES, TRANSACTION_STATUSES } from '../domain/transaction';
import { DELIVERY_STATUSES, PARTNER_EVENTS } from '../domain/webhooks';
import type { ResponseDoc } from './route-doc';

const instant = z.iso.datetime({ offset: true }).meta({ description: 'ISO 8601 timestamp (UTC)', example: '2026-11-23T19:04:08.123Z' });
const money = (description: string) => z.number().meta({ description: `${description}, in major units of the currency (2 decimals for USD, none for JPY)` });
const nullableMoney = (description: string) => money(description).nullable();
const svcTxId = z.string().regex(/^svc_tx_[0-9a-z]{24}$/).meta({ description: "The service's transaction id", example: 'svc_tx_0f3k9m2p7q8r1s4t5v6w7x8y' });
const currency = z.string().regex(/^[A-Z]{3}$/).meta({ description: 'ISO 4217 code, upper case', example: 'USD' });
const jsonObject = z.record(z.string(), z.unknown()).meta({ type: 'object', description: 'The JSON object sent, exactly' });

const replayMark = z.literal(true).optional().meta({ description: 'Present on a replayed answer (same idempotency key and body)' });

/** Every error but VALIDATION_ERROR: `{ error, code }`. */
export const ErrorBody = z
  .strictObject({
    error: z.string().meta({ description: 'What went wrong, for a person' }),
    code: z.string().meta({ description: 'The error code (stable, for programs)', example: 'CLIENT_NOT_FOUND' }),
    idempotentReplay: replayMark,
  })
  .meta({ id: 'Error' });

/** VALIDATION_ERROR: `{ error, code, details }`, `details` zod's flattened error (bounded). */
export const ValidationErrorBody = z
  .strictObject({
    error: z.string().meta({ description: 'What went wrong, for a person' }),
    code: z.literal('VALIDATION_ERROR'),
    details: z
      .strictObject({
        fieldErrors: z.record(z.string(), z.array(z.string())).meta({ description: 'Messages by request field' }),
        formErrors: z.array(z.string()).meta({ description: 'Messages about the request as a whole' }),
      })
      .meta({ description: 'What is wrong, by field and for the request as a whole' }),
    idempotentReplay: replayMark,
  })
  .meta({ id: 'ValidationError' });

/** The body of an error answer with this code. */
export const errorBodyOf = (code: string) => (code === 'VALIDATION_ERROR' ? ValidationErrorBody : ErrorBody);

/** An idempotent replay adds `idempotentReplay: true` to the first answer (decisions.md §4). */
const replayable = <T extends z.core.$ZodLooseShape>(shape: T) => z.strictObject({ ...shape, idempotentReplay: replayMark });

/** `{ items, next_cursor }` (decisions.md §9). */
export const pageOf = <T extends z.ZodType>(item: T, id: string) =>
  z
    .strictObject({
      items: z.array(item),
      next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last page' }),
    })
    .meta({ id });

export const Branding = z
  .strictObject({
    display_name: z.string().meta({ description: "The display name, or the partner's name when none is set" }),
    logo_url: z.string().nullable(),
    brand_color: z.string().nullable().meta({ example: '#1a2b3c' }),
  })
  .meta({ id: 'Branding' });

export const Partner = z
  .strictObject({
    partner_id: z.string().meta({ example: 'ptr_cc0g7fs3hpkca17rfvndrekn' }),
    name: z.string(),
    status: z.enum(PARTNER_STATUSES),
    kyc_status: z.enum(KYC_STATUSES),
    service_fee_percentage: z.number().meta({ description: "The platform's share of each payment, in percent" }),
    rate_limit_per_minute: z.number().int().nullable().meta({ description: 'Mutations a minute; null: the default' }),
    branding: Branding,
    created_at: instant,
    updated_at: instant,
  })
  .meta({ id: 'Partner' });

export const Client = z
  .strictObject({
    id: z.string(),
    partner_id: z.string(),
    client_id: z.string().meta({ description: "The merchant's id, chosen by the partner" }),
    legal_name: z.string(),
    status: z.enum(CLIENT_STATUSES),
    partner_fee_percentage: z.number().nullable(),
    partner_fee_flat_usd: z.number().nullable().meta({ description: 'Flat fee per payment in US dollars' }),
    created_at: instant,
    updated_at: instant,
  })
  .meta({ id: 'Client' });

export const IssuedApiKey = z
  .strictObject({
    key_id: z.string(),
    api_key: z.string().meta({ description: 'Shown this once: send it as `x-api-key`' }),
    hmac_secret: z.string().meta({ description: 'Shown this once: signs request bodies (`x-svc-hmac`)' }),
    scope: z.enum(['partner', 'platform']),
    partner_id: z.string().optional().meta({ description: 'Partner-scoped keys only' }),
  })
  .meta({ id: 'IssuedApiKey' });

export const ApiKey = z
  .strictObject({
    key_id: z.string().meta({ description: 'Revoke the key with `DELETE /admin/api-keys/{key_id}`', example: 'key_cqvf2a9h0pvbj1bjpspahxfp' }),
    scope: z.enum(['partner', 'platform']),
    partner_id: z.string().optional().meta({ description: 'Partner-scoped keys only' }),
    created_at: instant,
  })
  .meta({ id: 'ApiKey', description: 'An API key as issued, without the key or its HMAC secret (shown only when issued). A revoked key is gone' });

/** A page of a partner's keys or of the platform-wide keys (`GET /admin/partners/{id}/api-keys`, `GET /admin/api-keys`). */
export const ApiKeyPage = pageOf(ApiKey, 'ApiKeyPage');

export const Transaction = z
  .strictObject({
    id: z.string(),
    svcTxId,
    partnerId: z.string(),
    partnerName: z.string(),
    clientId: z.string(),
    clientName: z.string(),
    partnerReference: z.string(),
    processorPaymentIntentId: z.string().nullable(),
    amount: money('The amount'),
    currency,
    status: z.enum(TRANSACTION_STATUSES),
    processorFeePercent: z.number().nullable(),
    partnerFeePercent: z.number().nullable(),
    partnerPayoutPercent: z.number().nullable(),
    svcEarningPercent: z.number().nullable(),
    svcEarningAmount: nullableMoney("The platform's earning"),
    processorFee: nullableMoney("The processor's fee"),
    platformFee: nullableMoney("The platform's fee"),
    netAmount: nullableMoney('What the merchant is paid'),
    settlementStatus: z.enum(SETTLEMENT_STATUSES),
    refundedAmount: money('The cumulative amount refunded (0 without a refund)'),
    disputedAmount: money('The amount under dispute (0 without a dispute)'),
    disputeStatus: z.enum(DISPUTE_STATUSES).nullable().meta({ description: "The latest dispute's status; null without a dispute" }),
    meta: jsonObject.nullable(),
    createdAt: instant,
    updatedAt: instant,
  })
  .meta({ id: 'Transaction', description: 'Fee fields are null until the payment succeeds' });

export const TransactionPage = pageOf(Transaction, 'TransactionPage');

const checkoutFields = {
  svc_tx_id: svcTxId,
  status: z.enum(TRANSACTION_STATUSES).meta({
    description: "`pending`; a retry of an attempt whose first try wrote the transaction but lost its answer gets the transaction's status now",
  }),
  processor_payment_intent_id: z.string().meta({ example: 'pi_3QxYz0123456789abcdefghij' }),
  client_secret: z.string().meta({ description: "The intent's client secret, for the processor's payment element in the browser" }),
  processor_publishable_key: z.string().meta({ description: "The processor's publishable key for the browser" }),
};

export const CheckoutIntent = replayable(checkoutFields).meta({ id: 'CheckoutIntent' });

export const CheckoutIntentV2 = replayable({ ...checkoutFields, branding: Branding }).meta({ id: 'CheckoutIntentWithBranding' });

export const InitializedTransaction = replayable({ svc_tx_id: svcTxId, status: z.literal('initialized') }).meta({ id: 'InitializedTransaction' });

export const AttachedIntent = replayable({
  svc_tx_id: svcTxId,
  status: z.enum(TRANSACTION_STATUSES).meta({
    description:
      "`pending`, or the intent's outcome when it had one already (`succeeded`, `failed`, `abandoned`); attaching the same intent again answers the transaction's status now",
  }),
  processor_payment_intent_id: z.string().meta({ example: 'pi_3QxYz0123456789abcdefghij' }),
}).meta({ id: 'AttachedIntent' });

export const CreatedClient = replayable(Client.shape).meta({ id: 'CreatedClient' });

export const SettlementBatch = z
  .strictObject({
    id: z.string(),
    partnerId: z.string(),
    clientId: z.string(),
    currency,
    transactionIds: z.array(z.string()).meta({ description: 'The `svcTxId` of each payment in the batch' }),
    adjustments: z
      .array(
        z.strictObject({
          svcTxId: z.string(),
          type: z.enum(ENTRY_TYPES).meta({
            description: '`refund`, `chargeback`, `dispute_fee` (negative), `dispute_reinstated` (positive), or `transaction`: the sale of a payment refunded in full or charged back before settlement, settled beside its reversals',
          }),
          gross: money('Gross (negative for a reversal)'),
          processorFee: money('Processor fee (reversed: negative)'),
          platformFee: money('Platform fee (reversed: negative)'),
          net: money('Net (deducted: negative)'),
          createdAt: instant,
        }),
      )
      .meta({ description: "The ledger entries settled here besides the sales of `transactionIds`: every refund, dispute, dispute fee and reinstatement waiting for this merchant and currency, of earlier or included payments (decisions.md §5a)" }),
    totalGross: money('Sum of gross'),
    totalProcessorFees: money('Sum of processor fees'),
    totalPlatformFees: money('Sum of platform fees'),
    totalNet: money('What the merchant is paid'),
    status: z.enum(BATCH_STATUSES),
    railATransferId: z.string().nullable(),
    railBTransferId: z.string().nullable(),
    failureReason: z.string().nullable(),
    createdAt: instant,
    updatedAt: instant,
  })
  .meta({ id: 'SettlementBatch' });

export const SettlementBatchPage = pageOf(SettlementBatch, 'SettlementBatchPage');

export const Balance = z
  .strictObject({
    client_id: z.string().meta({ example: 'merchant-001' }),
    currency,
    unsettled_net: money('The net of the waiting sales (and dispute reinstatements)'),
    waiting_reversals: money('The net of the waiting refunds, disputes and dispute fees, as a positive amount'),
    owed: money('What the merchant owes: max(0, waiting_reversals - unsettled_net). While it owes, no batch is made for it'),
    next_payout_estimate: money('What the next settlement run pays: max(0, unsettled_net - waiting_reversals)'),
    owing_since: instant.nullable().meta({
      description: 'While the merchant owes: when its oldest waiting reversal was written (the service alarms on more than 7 days); null when it owes nothing',
    }),
  })
  .meta({
    id: 'Balance',
    description:
      "One merchant's money waiting for settlement in one currency (decisions.md §5a), summed from the same ledger entries a settlement run sums. " +
      "With `SETTLEMENT_CUTOFF=day_boundary` today's payments wait for the next day boundary, so the estimate is what the first run after it pays",
  });

export const BalancePage = pageOf(Balance, 'BalancePage');

export const SettlementRun = z
  .strictObject({
    created_batches: z.number().int(),
    batches: z.array(SettlementBatch),
    continuing: z.boolean().meta({
      description:
        'true when the run stopped before it was done (its time, or the size of this answer) and goes on by itself in the background: the batches it makes appear in GET /settlements. false when it settled everything eligible (or what it left waits for the next run).',
    }),
  })
  .meta({ id: 'SettlementRun' });

export const WebhookEndpoint = z
  .strictObject({
    id: z.string(),
    name: z.string(),
    url: z.string(),
    events: z.array(z.enum(PARTNER_EVENTS)),
    circuit: z
      .strictObject({
        state: z.enum(['closed', 'slow', 'probing', 'open']).meta({
          description:
            'closed: deliveries go out freely; slow: it answers, slowly (1 s or more), so two attempts at a time; probing: one attempt at a time (a new endpoint, or one recovering from timeouts); open: nothing is sent until open_until, after the endpoint timed out',
        }),
        open_until: instant.nullable(),
      })
      .meta({ description: "The endpoint's circuit breaker (docs/webhooks.md: Slow endpoints). While it cannot take them, the endpoint's deliveries wait, pending, with their attempts unchanged" }),
    created_at: instant,
  })
  .meta({ id: 'WebhookEndpoint' });

export const CreatedWebhookEndpoint = z
  .strictObject({ ...WebhookEndpoint.shape, secret: z.string().meta({ description: 'Shown this once: verifies the signatures of deliveries' }) })
  .meta({ id: 'CreatedWebhookEndpoint' });

export const WebhookDelivery = z
  .strictObject({
    id: z.string(),
    event_id: z.string(),
    endpoint_id: z.string(),
    event: z.enum(PARTNER_EVENTS),
    svc_tx_id: z.string(),
    status: z.enum(DELIVERY_STATUSES),
    attempts: z.number().int(),
    last_http_status: z.number().int().nullable(),
    last_error: z.string().nullable(),
    created_at: instant,
    updated_at: instant,
  })
  .meta({ id: 'WebhookDelivery' });

export const AuditEvent = z
  .strictObject({
    id: z.string(),
    type: z.enum(AUDIT_EVENT_TYPES),
    partner_id: z.string().nullable().meta({ description: 'The partner it concerns; null for a settlement run over every partner and for a platform-wide API key' }),
    resource_type: z.string(),
    resource_id: z.string(),
    details: jsonObject,
    created_at: instant,
  })
  .meta({ id: 'AuditEvent' });

export const HealthReport = z
  .strictObject({
    status: z.enum(['ok', 'unavailable']),
    checks: z.strictObject({ dynamodb: z.enum(['ok', 'fail']), processor: z.enum(['ok', 'fail']) }),
  })
  .meta({ id: 'HealthReport' });

export const BrandingPacket = z
  .strictObject({ partner_id: z.string(), client_id: z.string(), ...Branding.shape, processor_publishable_key: z.string() })
  .meta({ id: 'BrandingPacket' });

export const ProcessorEventAnswer = z
  .union([
    z.strictObject({ received: z.literal(true), svc_tx_id: svcTxId, status: z.enum(TRANSACTION_STATUSES) }),
    z.strictObject({ message: z.string().meta({ example: 'Ignored event type customer.created' }) }),
  ])
  .meta({ id: 'ProcessorEventAnswer' });

/**
 * The body of a partner webhook (`partnerEventBody` in `lib/domain/webhooks.ts` builds it): the OpenAPI
 * document's `webhooks`, and what the tests' partner endpoints hold every delivery to.
 */
export const PartnerWebhookBody = z
  .strictObject({
    event: z.enum(PARTNER_EVENTS),
    svc_tx_id: svcTxId,
    partner_id: z.string().meta({ example: 'ptr_0f3k9m2p7q8r1s4t5v6w7x8y' }),
    client_id: z.string().meta({ example: 'merchant-001' }),
    partner_reference: z.string().meta({ example: 'order-1042' }),
    status: z.enum(TRANSACTION_STATUSES).meta({ description: "The transaction's status the event reports" }),
    amount: money('The amount'),
    currency,
    meta: jsonObject.meta({ description: 'The `meta` given at checkout, exactly (an empty object when none was given)' }),
    refunded_amount: money('`transaction_partially_refunded` only: the cumulative amount refunded').optional(),
    dispute_status: z.enum(['won', 'lost']).optional().meta({ description: "`transaction_dispute_closed` only: the dispute's outcome" }),
  })
  .meta({ id: 'PartnerWebhook' });

/** The reconciliation report's answer (`GET /settlements/{id}/report.csv` and the admin route): RFC 4180 CSV. */
export const SETTLEMENT_REPORT_RESPONSE: ResponseDoc = {
  description: 'The report',
  contentType: 'text/csv',
  schema: z.string().meta({
    description: 'RFC 4180 CSV, UTF-8',
    example:
      'type,svc_tx_id,partner_reference,created_at,currency,gross,processor_fee,platform_fee,net\r\n' +
      'transaction,svc_tx_0f3k9m2p7q8r1s4t5v6w7x8y,order-1001,2026-11-22T10:15:00.000Z,USD,49.99,1.45,1.50,47.04\r\n' +
      'total,,,,USD,49.99,1.45,1.50,47.04\r\n',
  }),
  headers: { 'content-disposition': '`attachment; filename="settlement-<id>.csv"`' },
};
