/**
 * What a route tells its readers beyond the schemas it validates with: the OpenAPI document (`npm run openapi`,
 * `GET /api/v1/openapi.json`) is built from each route's `httpRoute` options, the request schemas the chain
 * validates with and this description of what it answers. Response schemas are zod too
 * (`response-schemas.ts`), and the tests hold every answer the service gives to them.
 *
 * The docs themselves are in `route-docs/`, one file per section of the reference (its tag), each route's named
 * after what it does (`checkoutIntentDoc`) and handed to `httpRoute` by its handler: the handler reads as its wiring.
 * Nothing reads a doc at run time (the chain only carries it on the handler's `contract`, for the generator), so
 * what matters is its weight in a bundle: each Lambda carries its own section's docs, never every route's.
 */
import type * as z from 'zod';

/** The payment gate's refusals (decisions.md §5): partner found, active, KYC approved; client found, active. */
export const PAYMENT_GATE_ERRORS = ['PARTNER_NOT_FOUND', 'PARTNER_NOT_ACTIVE', 'KYC_NOT_APPROVED', 'CLIENT_NOT_FOUND', 'CLIENT_NOT_ACTIVE'] as const;

/** A payout's errors (`POST /settlements/pay` and the admin route): the batch, its state, the payment gate, the rail. */
export const PAY_BATCH_ERRORS = ['BATCH_NOT_FOUND', 'BATCH_ALREADY_PAID', 'BATCH_PAYOUT_IN_PROGRESS', 'CLIENT_OWES', ...PAYMENT_GATE_ERRORS, 'PAYOUT_FAILED'] as const;

/** A checkout's errors (checkout-intent and -v2): the payment gate, the processor's keys and calls, a lost intent. */
export const CHECKOUT_ERRORS = [
  ...PAYMENT_GATE_ERRORS,
  'PROCESSOR_KEY_MISSING',
  'PROCESSOR_PUBLISHABLE_MISSING',
  'PROCESSOR_UNAVAILABLE',
  'PROCESSOR_INTENT_MISSING',
] as const;

/** The sections of the API reference, in its order. */
export const API_TAGS = {
  Health: 'Whether the service and its dependencies answer.',
  Clients: 'Merchants ("clients") of the partner whose API key calls. API key; mutations signed (HMAC) with an idempotency key.',
  Transactions: 'Checkout intents at the card processor, the legacy two-step flow, and reads. API key; mutations signed with an idempotency key.',
  Settlements: 'Settlement batches of succeeded transactions, their payouts over two rails, and reconciliation reports. API key.',
  Branding: "The checkout widget's public branding packet (no credentials; CORS).",
  'Processor webhook': "The card processor's events (Stripe's format), verified by their signature.",
  'Admin: partners': 'Partners and their API keys. Admin bearer token.',
  'Admin: webhooks': "Partners' webhook endpoints, deliveries and the audit log. Admin bearer token.",
  'Admin: transactions & settlements':
    "Every partner's transactions and settlement batches: search, settlement runs, payouts and reports, as the partner routes do them for a platform key. Admin bearer token.",
  Documentation: 'This document and its browsable reference.',
  'Partner webhooks': 'What the service sends to your webhook endpoints (not routes of the service).',
} as const;

export type ApiTag = keyof typeof API_TAGS;

/**
 * A long description (`route-docs/`) written as wrapped text, so it reads as it will be shown rather than as a chain
 * of quoted pieces: the lines of a paragraph are joined with single spaces, and a blank line separates paragraphs
 * (a Markdown paragraph break). A backtick in the text is escaped with a backslash. No interpolation: the text is
 * the template's own.
 */
export function prose(strings: TemplateStringsArray): string {
  return strings
    .join('')
    .trim()
    .split(/\n[ \t]*\n/)
    .map((paragraph) => paragraph.trim().replaceAll(/[ \t]*\n[ \t]*/g, ' '))
    .join('\n\n');
}

export interface ResponseDoc {
  description: string;
  /** The body's schema; none for an empty body (204). */
  schema?: z.ZodType;
  /** Defaults to `application/json`. */
  contentType?: 'application/json' | 'text/csv' | 'text/html' | 'text/javascript';
  /** Response headers worth naming, with what they carry. */
  headers?: Record<string, string>;
}

export interface RouteDoc {
  /** A few words: what the route does. */
  summary: string;
  /** More when the summary is not enough (Markdown). */
  description?: string;
  tag: ApiTag;
  /** The answers the route gives when it does its work, by HTTP status. */
  responses: Record<number, ResponseDoc>;
  /**
   * The error codes the route's own work may answer with (their statuses come from `lib/domain/errors.ts`).
   * Those its access steps, validation and the chain bring (API key, HMAC, idempotency, 400, 413, 503...) are
   * added by the generator from the route's options.
   */
  errors?: readonly string[];
  /** An example request body, as a partner would send it. */
  example?: unknown;
  /** A public route its handler authenticates itself: the processor webhook, by the processor's signature. */
  authentication?: 'processor-signature';
  /** CORS routes: the `OPTIONS` preflight's answer (204, answered before anything else runs). */
  preflight?: ResponseDoc;
}
