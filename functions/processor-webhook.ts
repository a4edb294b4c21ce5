/**
 * POST /api/v1/webhooks/processor: the card processor's signed events. In AWS this function also has a Lambda
 * function URL (auth NONE: the processor authenticates by the signature); locally, the route.
 *
 * Public: no API key. No JSON body step in the chain: the signature is verified over the exact raw body first,
 * and only then is the body parsed (in the processor adapter). `processor-signature` is the spec's header;
 * `Stripe-Signature`, what Stripe itself sends, is read when it is absent.
 */
import { processorEventDeps } from '../lib/adapters/processor-events';
import { httpRoute } from '../lib/adapters/http-route';
import { ProcessorEventAnswer } from '../lib/http/response-schemas';
import type { RouteDoc } from '../lib/http/route-doc';
import { handleProcessorEvent, type ProcessorEventDeps } from '../lib/use-cases/processor-events';

const present = (value: string | undefined) => (value === undefined || value.trim() === '' ? undefined : value);

/** Stripe's events are a few KB (an expanded object at most tens of KB); anything far larger is not one. */
const MAX_EVENT_BYTES = 256 * 1024;

const doc: RouteDoc = {
  summary: "Receive a card processor event",
  authentication: 'processor-signature',
  description:
    'Called by the card processor only (Stripe\'s webhook format); public, no API key: the request is authenticated by its signature.\n\n' +
    '**Signature.** Header `processor-signature` (Stripe\'s own `stripe-signature` is read when it is absent): `t=<unix seconds>,v1=<hex>`, where ' +
    '`v1` is the lowercase hex HMAC-SHA256 of `<t>.<exact raw body>` keyed by the webhook secret. The timestamp must be within 300 seconds of now ' +
    '(older or later is refused, so a captured event cannot be replayed). No header: 400 PROCESSOR_SIGNATURE_MISSING; a signature that does not ' +
    'verify: 400 PROCESSOR_SIGNATURE_INVALID; the service without a webhook secret configured: 500 PROCESSOR_WEBHOOK_SECRET_MISSING (the ' +
    'processor retries). Nothing in the body is read before the signature is verified.\n\n' +
    '**Body.** The raw Stripe event, at most 256 KB: a JSON object with a non-empty string `id` and `type`, and `data.object` (the payment ' +
    'intent on `payment_intent.*`; the charge or dispute, whose `payment_intent` names the intent, on `charge.*`). Not such an object: 400 ' +
    'INVALID_WEBHOOK_JSON. Mapped types: `payment_intent.succeeded` → succeeded, `payment_intent.payment_failed` → failed, ' +
    '`payment_intent.canceled` → abandoned, `charge.refunded` (fully refunded only) → refunded, `charge.dispute.created` → chargeback. Any ' +
    'other type is acknowledged: 200 `{ "message": "Ignored event type <type>" }`. A mapped event without a payment intent id is 400 ' +
    'MISSING_INTENT_ID; one whose intent no transaction is linked to is 404 PAYMENT_INTENT_NOT_FOUND.\n\n' +
    '**Effect.** An allowed move (pending → succeeded | failed | abandoned; failed → succeeded; succeeded → refunded | chargeback) updates the ' +
    'transaction (fees computed on success) and queues a partner webhook for each subscribed endpoint, in one atomic write. A duplicate or late ' +
    'event, a move not allowed, a partial refund, or an event whose amount or currency is not the transaction\'s changes nothing and answers 200 ' +
    'with the current status. Each event id is processed once.',
  tag: 'Processor webhook',
  responses: {
    200: {
      description: '`{ received: true, svc_tx_id, status }` (the transaction\'s status after the event), or `{ message }` for an ignored event type',
      schema: ProcessorEventAnswer,
    },
  },
  errors: [
    'PROCESSOR_SIGNATURE_MISSING',
    'PROCESSOR_SIGNATURE_INVALID',
    'PROCESSOR_WEBHOOK_SECRET_MISSING',
    'INVALID_WEBHOOK_JSON',
    'MISSING_INTENT_ID',
    'PAYMENT_INTENT_NOT_FOUND',
  ],
};

/** The handler over given adapters (tests inject faults); `handler` uses the real ones. */
export const createHandler = (deps: ProcessorEventDeps) =>
  httpRoute({ access: 'public', maxBodyBytes: MAX_EVENT_BYTES, doc }, async ({ headers, rawBody }) => {
    const signatureHeader = present(headers['processor-signature']) ?? present(headers['stripe-signature']);
    const outcome = await handleProcessorEvent(deps, { rawBody, signatureHeader });
    if (outcome.kind === 'ignored') return { status: 200, body: { message: `Ignored event type ${outcome.type}` } };
    return { status: 200, body: { received: true, svc_tx_id: outcome.svcTxId, status: outcome.status } };
  });

export const handler = createHandler(processorEventDeps);
