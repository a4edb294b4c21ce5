/**
 * The example partner backend: the three routes a partner's checkout needs, on plain node:http.
 *
 *   POST /checkout                      the browser asks to pay an order, naming it only: one checkout attempt per order
 *   POST /webhooks/payments             the service reports a payment's new status: verified, stored, answered at
 *                                       once, reconciled afterwards (webhooks.ts, reconciliation.ts)
 *   GET  /orders/{partner_reference}    the order's status, reconciled with the service on every read
 *
 * The browser never talks to the service with credentials: it sends an order id and gets only the intent's
 * `client_secret` and the processor's publishable key; the price comes from the partner's own order
 * (orders.ts). After confirming the payment it asks GET /orders, which reads the service, since the payment
 * element's success callback alone proves nothing (docs/checkout.md, "The frontend").
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AttemptStore, type CheckoutAttempt, InMemoryAttemptStore } from './attempts';
import type { Order, OrderCatalogue } from './orders';
import { BackgroundReconciler, reconcile } from './reconciliation';
import { type CheckoutRequest, idempotencyKeys, type ServiceClient, ServiceApiError, ServiceUnreachableError } from './service-client';
import { InMemoryProcessedEvents, PaymentWebhooks, type ProcessedEvents } from './webhooks';

export interface PartnerBackendOptions {
  port: number;
  host?: string;
  /** The partner the API key belongs to: checkout bodies name it. */
  partnerId: string;
  service: ServiceClient;
  /** The secret of the webhook endpoint registered for `POST /webhooks/payments`. */
  webhookSecret: string;
  /** The partner's own orders: where a checkout's merchant, amount and currency come from. */
  orders: OrderCatalogue;
  attempts?: AttemptStore;
  processedEvents?: ProcessedEvents;
}

export interface PartnerBackend {
  url: string;
  /** Stops listening, then waits for the reconciliations still running. */
  close(): Promise<void>;
}

/** Far above any order or webhook body: a larger one is refused unread. */
const MAX_BODY_BYTES = 64 * 1024;

/** Service errors the order itself caused (bad field, unknown merchant, a reference reused with another order): the browser sees them. */
const ORDER_ERRORS = new Set([400, 403, 404, 409, 422]);

/**
 * How long after its first checkout an attempt may be sent again. The service keeps an idempotency key at least
 * 24 hours and replays it meanwhile; after that the same key makes a new payment. An hour's margin for clocks.
 */
const REPLAY_WINDOW_MS = 23 * 60 * 60 * 1000;

const ORDER_HAS_PAYMENT = { status: 409, body: { error: 'This order already has a payment; use a new partner_reference', code: 'ORDER_HAS_PAYMENT' } };

interface Answer {
  status: number;
  body: unknown;
  /** Work to start once the answer is sent. */
  after?: () => void;
}

/** The service's checkout body for `order`, built field by field in a fixed order: the same order gives the same bytes. */
function checkoutRequestFor(partnerId: string, order: Order): CheckoutRequest {
  const request: CheckoutRequest = {
    partner_id: partnerId,
    client_id: order.client_id,
    amount: order.amount,
    currency: order.currency,
    email: order.email,
    partner_reference: order.partner_reference,
  };
  if (order.statement_descriptor_suffix !== undefined) request.statement_descriptor_suffix = order.statement_descriptor_suffix;
  return request;
}

const isReplayable = (attempt: CheckoutAttempt, now: number) => now - Date.parse(attempt.created_at) < REPLAY_WINDOW_MS;

export async function startPartnerBackend(options: PartnerBackendOptions): Promise<PartnerBackend> {
  const attempts = options.attempts ?? new InMemoryAttemptStore();
  const service = options.service;
  const webhooks = new PaymentWebhooks({
    secret: options.webhookSecret,
    attempts,
    processedEvents: options.processedEvents ?? new InMemoryProcessedEvents(),
  });
  const reconciler = new BackgroundReconciler({ attempts, service });

  /**
   * Pays one order, at most once. Steps:
   * 1. Find the order the browser names; everything else in its request is ignored (it must not set the price).
   * 2. Read this backend's attempt record before calling the service. An attempt older than the service's
   *    idempotency window ({@link REPLAY_WINDOW_MS}) is final: 409 ORDER_HAS_PAYMENT, and the service is not
   *    called, since the same key sent now would create a second payment. A newer one is sent again below and
   *    the service replays it (a reloaded page needs the `client_secret` again).
   * 3. Send the checkout under `checkout-<partner_reference>`, with the order's fields in a fixed order, so the
   *    service sees the same key and bytes every time and replays rather than creating (it compares bytes).
   * 4. Record the attempt; the first record for a reference wins.
   */
  async function checkout(body: Record<string, unknown>): Promise<Answer> {
    const { partner_reference } = body;
    if (typeof partner_reference !== 'string') return { status: 400, body: { error: 'partner_reference (the order id, a string) is required' } };
    const order = await options.orders.get(partner_reference);
    if (order === undefined) return { status: 404, body: { error: 'No such order' } };
    const existing = await attempts.get(partner_reference);
    if (existing !== undefined && !isReplayable(existing, Date.now())) return ORDER_HAS_PAYMENT;

    const idempotencyKey = idempotencyKeys.checkout(partner_reference);
    const intent = await service.checkoutIntent(checkoutRequestFor(options.partnerId, order), idempotencyKey);
    const attempt = await attempts.insertIfAbsent({
      partner_reference,
      idempotency_key: idempotencyKey,
      svc_tx_id: intent.svc_tx_id,
      processor_payment_intent_id: intent.processor_payment_intent_id,
      statement_descriptor_suffix: order.statement_descriptor_suffix ?? null,
      status: intent.status,
      created_at: new Date().toISOString(),
    });
    // Only if the service forgot the key early: the reference stays bound to its first payment.
    if (attempt.svc_tx_id !== intent.svc_tx_id) return ORDER_HAS_PAYMENT;
    return { status: 201, body: { partner_reference, client_secret: intent.client_secret, processor_publishable_key: intent.processor_publishable_key } };
  }

  /** Store, answer, then reconcile: the answer never waits for the service (it allows 10 s for it). */
  async function paymentWebhook(request: IncomingMessage, rawBody: string): Promise<Answer> {
    const received = await webhooks.receive(rawBody, request.headers);
    if (received.outcome === 'refused') return { status: 400, body: { error: 'Invalid signature' } };
    const after = received.outcome === 'processed' ? () => reconciler.schedule(received.attempt) : undefined;
    return { status: 200, body: { received: true }, after };
  }

  async function order(partnerReference: string): Promise<Answer> {
    const attempt = await attempts.get(partnerReference);
    if (attempt === undefined) return { status: 404, body: { error: 'No such order' } };
    const reconciled = await reconcile({ attempts, service }, attempt);
    return { status: 200, body: { partner_reference: reconciled.partner_reference, svc_tx_id: reconciled.svc_tx_id, status: reconciled.status } };
  }

  async function route(request: IncomingMessage, rawBody: string): Promise<Answer> {
    const { pathname } = new URL(request.url ?? '/', 'http://localhost');
    if (request.method === 'POST' && pathname === '/checkout') {
      const body = parseJson(rawBody);
      return typeof body === 'object' && body !== null ? checkout(body as Record<string, unknown>) : { status: 400, body: { error: 'A JSON object is required' } };
    }
    if (request.method === 'POST' && pathname === '/webhooks/payments') return paymentWebhook(request, rawBody);
    const orderPath = /^\/orders\/([^/]+)$/.exec(pathname);
    if (request.method === 'GET' && orderPath !== null) return order(decodeURIComponent(orderPath[1] as string));
    return { status: 404, body: { error: 'Not found' } };
  }

  const server = createServer((request, response) => {
    readBody(request)
      .then((rawBody) => (rawBody === undefined ? { status: 413, body: { error: 'Body too large' } } : route(request, rawBody)))
      .catch((error: unknown): Answer => {
        if (error instanceof ServiceApiError && ORDER_ERRORS.has(error.status)) return { status: error.status, body: { error: error.message, code: error.code, details: error.details } };
        console.error(`[partner-backend] ${request.method} ${request.url}:`, error);
        // The service refusing our credentials or failing (502), or not answering (503): the caller may retry (a webhook is resent by the service).
        if (error instanceof ServiceApiError) return { status: 502, body: { error: 'The payment service refused the request' } };
        if (error instanceof ServiceUnreachableError) return { status: 503, body: { error: 'The payment service is unavailable; try again' } };
        // A fault of this backend (a store failing, a bug): its own 500, so nobody looks for it in the payment service.
        return { status: 500, body: { error: 'The partner backend failed; see its log' } };
      })
      .then((answer) => {
        send(response, answer);
        answer.after?.();
      });
  });
  await new Promise<void>((resolve) => server.listen(options.port, options.host ?? '127.0.0.1', resolve));
  const { address, port } = server.address() as AddressInfo;
  return {
    url: `http://${address}:${port}`,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await reconciler.idle();
    },
  };
}

/** The raw body as text (verification needs the exact bytes), or undefined past {@link MAX_BODY_BYTES}. */
async function readBody(request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function send(response: ServerResponse, { status, body }: Answer): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
