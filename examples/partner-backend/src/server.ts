/**
 * The example partner backend: the routes a partner's checkout needs, on plain node:http.
 *
 *   POST /checkout                      the browser asks to pay an order, naming it only: one checkout attempt per order
 *   POST /webhooks/payments             the service reports a payment's new status: verified, stored, answered at
 *                                       once, reconciled afterwards (webhooks.ts, reconciliation.ts)
 *   GET  /orders/{partner_reference}    the order's status, reconciled with the service on every read
 *   GET  /payments/{svc_tx_id}          the same, found by the service's id: what the checkout page reconciles by
 *
 * With a `shop` (shop.ts), the products and a new order for one of them:
 *   GET  /products, POST /orders
 * With a `frontend`, the checkout page a buyer pays on (public/; the spec's frontend rules, docs/checkout.md):
 *   GET  /checkout (the page), /checkout.js, /checkout.css
 *
 * The browser never talks to the service with credentials: it sends an order id and gets only the intent's
 * `client_secret` and the processor's publishable key; the price comes from the partner's own order
 * (orders.ts). After confirming the payment it asks GET /payments, which reads the service, since the payment
 * element's success callback alone proves nothing (docs/checkout.md, "The frontend").
 *
 * `createPartnerBackend` answers requests (mounted under `basePath` in another server: `npm start` serves this
 * backend at `/sandbox`); `startPartnerBackend` runs it on a server of its own.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AttemptStore, type CheckoutAttempt, InMemoryAttemptStore } from './attempts';
import { CheckoutPage, type CheckoutPageOptions } from './checkout-page';
import type { Order, OrderCatalogue } from './orders';
import { BackgroundReconciler, reconcile } from './reconciliation';
import { type CheckoutRequest, idempotencyKeys, type ServiceClient, ServiceApiError, ServiceUnreachableError } from './service-client';
import type { Shop } from './shop';
import { InMemoryProcessedEvents, PaymentWebhooks, type ProcessedEvents } from './webhooks';

export interface PartnerBackendHandlerOptions {
  /** The partner the API key belongs to: checkout bodies name it. */
  partnerId: string;
  service: ServiceClient;
  /** The secret of the webhook endpoint registered for `POST /webhooks/payments`. */
  webhookSecret: string;
  /** The partner's own orders: where a checkout's merchant, amount and currency come from. */
  orders: OrderCatalogue;
  attempts?: AttemptStore;
  processedEvents?: ProcessedEvents;
  /** Products the checkout page sells (`GET /products`, `POST /orders`); their orders must go to `orders`. */
  shop?: Shop;
  /** Serves the checkout page (`GET /checkout`) with the processor's browser library. */
  frontend?: CheckoutPageOptions;
  /** Where the routes are mounted (`/sandbox`: `GET /sandbox/checkout`); default the root. */
  basePath?: string;
}

export interface PartnerBackendOptions extends PartnerBackendHandlerOptions {
  port: number;
  host?: string;
}

export interface PartnerBackendHandler {
  /** Answers one request (its path under `basePath`); answers 404 outside it. */
  handle(request: IncomingMessage, response: ServerResponse): void;
  /** Resolves once the reconciliations started so far have finished. */
  idle(): Promise<void>;
}

export interface PartnerBackend {
  url: string;
  /** Resolves once the reconciliations started so far have finished (a webhook's answer never waits for its own). */
  idle(): Promise<void>;
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

/** A JSON answer, or a file's text (`raw`) with its own headers. */
type Answer = { status: number; after?: () => void } & ({ body: unknown } | { raw: string; headers: Record<string, string> });

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

const paymentOf = (attempt: CheckoutAttempt) => ({ partner_reference: attempt.partner_reference, svc_tx_id: attempt.svc_tx_id, status: attempt.status });

export function createPartnerBackend(options: PartnerBackendHandlerOptions): PartnerBackendHandler {
  const attempts = options.attempts ?? new InMemoryAttemptStore();
  const service = options.service;
  const basePath = options.basePath ?? '';
  const page = options.frontend === undefined ? undefined : new CheckoutPage(options.frontend);
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
    // `svc_tx_id` is no secret: the page reconciles by it (GET /payments/{svc_tx_id}).
    return {
      status: 201,
      body: { partner_reference, svc_tx_id: intent.svc_tx_id, client_secret: intent.client_secret, processor_publishable_key: intent.processor_publishable_key },
    };
  }

  /** Store, answer, then reconcile: the answer never waits for the service (it allows 10 s for it). */
  async function paymentWebhook(request: IncomingMessage, rawBody: string): Promise<Answer> {
    const received = await webhooks.receive(rawBody, request.headers);
    if (received.outcome === 'refused') return { status: 400, body: { error: 'Invalid signature, or not a payment event' } };
    const after = received.outcome === 'processed' ? () => reconciler.schedule(received.attempt) : undefined;
    return { status: 200, body: { received: true }, after };
  }

  /** The attempt's status as the service has it now (forward only); 404 for a payment this backend did not start. */
  async function reconciled(attempt: CheckoutAttempt | undefined): Promise<Answer> {
    if (attempt === undefined) return { status: 404, body: { error: 'No such order' } };
    return { status: 200, body: paymentOf(await reconcile({ attempts, service }, attempt)) };
  }

  function newOrder(shop: Shop, body: Record<string, unknown>): Answer {
    const result = shop.order(body);
    if (result.outcome === 'refused') return { status: result.status, body: { error: result.error } };
    const { order, product } = result;
    return { status: 201, body: { partner_reference: order.partner_reference, name: product.name, amount: order.amount, currency: order.currency } };
  }

  /**
   * Runs `use` on the browser's JSON body, or refuses the request. Only `application/json` is read: a page of
   * another site can send a form or text/plain cross-origin without asking, but JSON only after a CORS preflight,
   * which this backend never grants; so no other site can make orders or payments in a buyer's browser.
   */
  async function withBrowserJson(request: IncomingMessage, rawBody: string, use: (body: Record<string, unknown>) => Answer | Promise<Answer>): Promise<Answer> {
    const type = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    if (type !== 'application/json') return { status: 415, body: { error: 'Send the body as application/json' } };
    const body = parseJson(rawBody);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return { status: 400, body: { error: 'A JSON object is required' } };
    return use(body as Record<string, unknown>);
  }

  async function route(request: IncomingMessage, pathname: string, rawBody: string): Promise<Answer> {
    // HEAD is GET without the body (Node drops it).
    const method = request.method === 'HEAD' ? 'GET' : (request.method ?? 'GET');
    if (method === 'POST' && pathname === '/webhooks/payments') return paymentWebhook(request, rawBody);
    if (method === 'POST' && pathname === '/checkout') return withBrowserJson(request, rawBody, checkout);
    const { shop } = options;
    if (shop !== undefined && method === 'POST' && pathname === '/orders') return withBrowserJson(request, rawBody, (body) => newOrder(shop, body));
    if (shop !== undefined && method === 'GET' && pathname === '/products') {
      return { status: 200, body: { items: shop.products.map(({ sku, name, amount, currency }) => ({ sku, name, amount, currency })) } };
    }
    const orderPath = /^\/orders\/([^/]+)$/.exec(pathname);
    if (method === 'GET' && orderPath !== null) return reconciled(await attempts.get(decodeSegment(orderPath[1] as string)));
    const paymentPath = /^\/payments\/([^/]+)$/.exec(pathname);
    if (method === 'GET' && paymentPath !== null) return reconciled(await attempts.findBySvcTxId(decodeSegment(paymentPath[1] as string)));
    const file = method === 'GET' ? page?.file(pathname) : undefined;
    if (file !== undefined) return { status: 200, raw: file.content, headers: file.headers };
    return { status: 404, body: { error: 'Not found' } };
  }

  return {
    handle(request, response) {
      readBody(request)
        .then((rawBody) => {
          if (rawBody === undefined) return { status: 413, body: { error: 'Body too large' } };
          const pathname = pathOf(request.url);
          const inBase = pathname !== undefined && (basePath === '' || pathname.startsWith(`${basePath}/`));
          return inBase ? route(request, pathname.slice(basePath.length), rawBody) : { status: 404, body: { error: 'Not found' } };
        })
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
    },
    idle: () => reconciler.idle(),
  };
}

export async function startPartnerBackend(options: PartnerBackendOptions): Promise<PartnerBackend> {
  const backend = createPartnerBackend(options);
  const server = createServer((request, response) => backend.handle(request, response));
  await new Promise<void>((resolve) => server.listen(options.port, options.host ?? '127.0.0.1', resolve));
  const { address, port } = server.address() as AddressInfo;
  return {
    url: `http://${address}:${port}`,
    idle: () => backend.idle(),
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await backend.idle();
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

/** The request target's path; `undefined` for a target that is not one (`//`, `http://[`): answered 404. */
function pathOf(url: string | undefined): string | undefined {
  try {
    return new URL(url ?? '/', 'http://localhost').pathname;
  } catch {
    return undefined;
  }
}

/** A path segment as sent (`%2F` stays inside it); a malformed escape matches nothing. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return '';
  }
}

function send(response: ServerResponse, answer: Answer): void {
  if ('raw' in answer) {
    response.writeHead(answer.status, answer.headers).end(answer.raw);
    return;
  }
  response.writeHead(answer.status, { 'content-type': 'application/json', 'x-content-type-options': 'nosniff' }).end(JSON.stringify(answer.body));
}
