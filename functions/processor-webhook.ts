/**
 * POST /api/v1/webhooks/processor: the card processor's signed events. In AWS this function also has a Lambda
 * function URL (auth NONE: the processor authenticates by the signature); locally, the route.
 *
 * Public: no API key. No JSON body step in the chain: the signature is verified over the exact raw body first,
 * and only then is the body parsed (in the processor adapter). `processor-signature` is the spec's header;
 * `Stripe-Signature`, what Stripe itself sends, is read when it is absent.
 */
import { processorEventDeps } from '../lib/composition/processor-events';
import { httpRoute } from '../lib/composition/http-route';
import { handleProcessorEvent, type ProcessorEventDeps } from '../lib/use-cases/processor-events';
import { processorWebhookDoc } from '../lib/http/route-docs/processor-webhook';

const present = (value: string | undefined) => (value === undefined || value.trim() === '' ? undefined : value);

/** Stripe's events are a few KB (an expanded object at most tens of KB); anything far larger is not one. */
const MAX_EVENT_BYTES = 256 * 1024;

/** The handler over given adapters (tests inject faults); `handler` uses the real ones. */
export const createHandler = (deps: ProcessorEventDeps) =>
  httpRoute({ access: 'public', maxBodyBytes: MAX_EVENT_BYTES, doc: processorWebhookDoc }, async ({ headers, rawBody }) => {
    const signatureHeader = present(headers['processor-signature']) ?? present(headers['stripe-signature']);
    const outcome = await handleProcessorEvent(deps, { rawBody, signatureHeader });
    if (outcome.kind === 'ignored') return { status: 200, body: { message: `Ignored event type ${outcome.type}` } };
    return { status: 200, body: { received: true, svc_tx_id: outcome.svcTxId, status: outcome.status } };
  });

export const handler = createHandler(processorEventDeps);
