/**
 * The example partner backend: the three routes a partner's checkout needs, on plain node:http.
 *
 *   POST /checkout                      the browser asks to pay an order: one checkout attempt per order
 *   POST /webhooks/payments             the service reports a payment's new status (webhooks.ts)
 *   GET  /orders/{partner_reference}    the order's status, reconciled with the service on every read
 *
 * The browser never talks to the service with credentials: it gets only the intent's `client_secret` and the
 * processor's publishable key, and after confirming the payment it asks GET /orders, which reads the service,
 * since the payment element's success callback alone proves nothing (docs/checkout.md, "The frontend").
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AttemptStore, InMemoryAttemptStore } from './attempts';
import { type CheckoutRequest, idempotencyKeys, type ServiceClient, ServiceApiError } from './service-client';
import { InMemoryProcessedEvents, PaymentWebhooks, type ProcessedEvents, reconcile } from './webhooks';

export interface PartnerBackendOptions {
  port: number;
  host?: string;
  /** The partner the API key belongs to: checkout bodies name it. */
  partnerId: string;
  service: ServiceClient;
  /** The secret of the webhook endpoint registered for `POST /webhooks/payments`. */
  webhookSecret: string;
  attempts?: AttemptStore;
  processedEvents?: ProcessedEvents;
}

export interface PartnerBackend {
  url: string;
  close(): Promise<void>;
}

/** Far above any order or webhook body: a larger one is refused unread. */
const MAX_BODY_BYTES = 64 * 1024;

/** Service errors the order itself caused (bad field, unknown merchant, a reference reused with another order): the browser sees them. */
const ORDER_ERRORS = new Set([400, 403, 404, 409, 422]);

interface Answer {
  status: number;
  body: unknown;
}

export async function startPartnerBackend(options: PartnerBackendOptions): Promise<PartnerBackend> {
  const attempts = options.attempts ?? new InMemoryAttemptStore();
  const service = options.service;
  const webhooks = new PaymentWebhooks({
    secret: options.webhookSecret,
    attempts,
    processedEvents: options.processedEvents ?? new InMemoryProcessedEvents(),
    service,
  });

  /**
   * One attempt per order: the idempotency key comes from the partner_reference and the body is built field by
   * field in a fixed order, so asking again for the same order sends the same key and the same bytes and gets
   * the same payment back (the service compares bytes), never a second one.
   */
  async function checkout(body: Record<string, unknown>): Promise<Answer> {
    const { partner_reference, client_id, amount, currency, email, statement_descriptor_suffix } = body;
    if (typeof partner_reference !== 'string' || typeof client_id !== 'string' || typeof amount !== 'number' || typeof currency !== 'string' || typeof email !== 'string') {
      return { status: 400, body: { error: 'partner_reference, client_id, currency and email (strings) and amount (a number) are required' } };
    }
    if (statement_descriptor_suffix !== undefined && typeof statement_descriptor_suffix !== 'string') {
      return { status: 400, body: { error: 'statement_descriptor_suffix must be a string' } };
    }
    // A real backend takes the amount from its own order, never from the browser; the example keeps no orders.
    const request: CheckoutRequest = { partner_id: options.partnerId, client_id, amount, currency, email, partner_reference };
    if (statement_descriptor_suffix !== undefined) request.statement_descriptor_suffix = statement_descriptor_suffix;
    const idempotencyKey = idempotencyKeys.checkout(partner_reference);
    const intent = await service.checkoutIntent(request, idempotencyKey);
    const attempt = await attempts.insertIfAbsent({
      partner_reference,
      idempotency_key: idempotencyKey,
      svc_tx_id: intent.svc_tx_id,
      processor_payment_intent_id: intent.processor_payment_intent_id,
      statement_descriptor_suffix: statement_descriptor_suffix ?? null,
      status: intent.status,
    });
    // The service keeps a key 24 hours; the same key sent later makes a new payment. The reference stays bound to its first one.
    if (attempt.svc_tx_id !== intent.svc_tx_id) {
      return { status: 409, body: { error: 'This order already has a payment; use a new partner_reference', code: 'ORDER_HAS_PAYMENT' } };
    }
    return { status: 201, body: { partner_reference, client_secret: intent.client_secret, processor_publishable_key: intent.processor_publishable_key } };
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
    if (request.method === 'POST' && pathname === '/webhooks/payments') {
      const { outcome } = await webhooks.receive(rawBody, request.headers);
      return outcome === 'refused' ? { status: 400, body: { error: 'Invalid signature' } } : { status: 200, body: { received: true } };
    }
    const orderPath = /^\/orders\/([^/]+)$/.exec(pathname);
    if (request.method === 'GET' && orderPath !== null) return order(decodeURIComponent(orderPath[1] as string));
    return { status: 404, body: { error: 'Not found' } };
  }

  const server = createServer((request, response) => {
    readBody(request)
      .then((rawBody) => (rawBody === undefined ? { status: 413, body: { error: 'Body too large' } } : route(request, rawBody)))
      .catch((error: unknown) => {
        if (error instanceof ServiceApiError && ORDER_ERRORS.has(error.status)) return { status: error.status, body: { error: error.message, code: error.code, details: error.details } };
        // The service unreachable or refusing our credentials: the caller may retry (a webhook is resent by the service).
        console.error(`[partner-backend] ${request.method} ${request.url}:`, error);
        return { status: error instanceof ServiceApiError ? 502 : 503, body: { error: 'The payment service is unavailable; try again' } };
      })
      .then((answer) => send(response, answer));
  });
  await new Promise<void>((resolve) => server.listen(options.port, options.host ?? '127.0.0.1', resolve));
  const { address, port } = server.address() as AddressInfo;
  return {
    url: `http://${address}:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
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
