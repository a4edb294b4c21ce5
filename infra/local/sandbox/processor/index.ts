/**
 * The local SANDBOX PROCESSOR: an HTTP server that speaks the subset of Stripe's REST API (v1) the service
 * uses, so the real `stripe` SDK talks to it unchanged (`new Stripe(secretKey, { host, port, protocol: 'http' })`),
 * and that sends Stripe-signed events to the service's webhook endpoint (`events.ts`).
 *
 * Stripe's API served here:
 *   POST /v1/payment_intents                create (requires_payment_method)
 *   GET  /v1/payment_intents/:id            retrieve (also with the publishable key and `client_secret`)
 *   POST /v1/payment_intents/:id/confirm    pm_card_visa succeeds, pm_card_chargeDeclined is declined (402)
 *                                           (also with the publishable key and `client_secret`)
 *   POST /v1/payment_intents/:id/cancel
 *   POST /v1/refunds                        by payment_intent or charge, full or partial
 *   OPTIONS /v1/*                           CORS preflight (204, no auth)
 * As js.stripe.com serves it:
 *   GET  /v3, /v3/, /v3/stripe.js           the Stripe.js stand-in (`stripe-js/stripe.js`; no auth):
 *                                           Stripe(pk), elements({ clientSecret }), the payment element,
 *                                           elements.submit(), confirmPayment, retrievePaymentIntent
 * Sandbox-only:
 *   POST /sandbox/payment_intents/:id/dispute   the cardholder disputes the payment (charge.dispute.created):
 *                                               `amount` (default: all not refunded), `fee` (default 1500)
 *   POST /sandbox/disputes/:id/close            the card network decides it, `status=won|lost`
 *                                               (charge.dispute.closed)
 *   GET  /sandbox/events                        every event with its delivery attempts (secret key only: events
 *                                               carry each intent's client_secret and metadata)
 *   POST /sandbox/events/drop                   `enabled=true|false`: from now on, record every event as `dropped`
 *                                               and send none (or send them again); answers `{ dropping }`. Also
 *                                               the `dropEvents` option (`PROCESSOR_SANDBOX_DROP_EVENTS` for npm start)
 *   POST /sandbox/events/:id/deliver            send a dropped or failed event now, late (same id and body)
 *
 * As at Stripe: every /v1 request (and every sandbox-only route) needs `Authorization: Bearer <secretKey>`, except
 * that a browser may retrieve and confirm an intent with the publishable key (`Authorization: Bearer <pk>` or,
 * as Stripe.js sends it, the `key` parameter) and the intent's `client_secret`, and reads it without `metadata`;
 * any other call with the publishable key is refused (401). /v1 answers carry `access-control-allow-origin: *`;
 * every answer carries `x-content-type-options: nosniff`. The sandbox listens on 127.0.0.1 unless given a `host`.
 * Bodies are form-encoded (`metadata[k]=v`, `payment_method_types[0]=card`); errors are `{ error: { type, code,
 * message, param } }` with Stripe's statuses; a POST's `Idempotency-Key` (scoped to the API key, kept 24 h)
 * replays the first response (`Idempotent-Replayed: true`) or, with other parameters, answers 400
 * `idempotency_error`. Events are delivered after the response that caused them has been sent. A charge, in an
 * event, lists its refunds (`refunds`, newest first); a dispute carries its `balance_transactions`.
 *
 * With `stateDir`, everything the sandbox keeps survives a restart (`state.ts`): each request
 * that changed something is answered only once its change is on disk.
 *
 * This file starts and stops the sandbox and is its public surface. The parts, each in `<part>.ts`:
 * `api` (HTTP: routing, idempotent requests), `keys` (which API key a request carries), `publishable` (what the
 * publishable key may do and see), `browser` (CORS, serving the Stripe.js stand-in), `form` (Stripe's form
 * encoding), `params` (parameter checks), `intents` (the PaymentIntent state machine), `charges` (refunds,
 * disputes), `objects` (Stripe's object shapes and their store), `idempotency`, `state` (the state file),
 * `events` (signed webhook delivery), `errors` (Stripe's error shape). The stand-in itself is plain browser
 * JavaScript, `stripe-js/stripe.js`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeGracefully, listen } from '../../http-server';
import { Api } from './api';
import { loadStripeJs } from './browser';
import { DEFAULT_RETRY_DELAYS_MS, EventDispatcher, type SandboxEvent } from './events';
import { IdempotencyKeys } from './idempotency';
import { ApiKeys } from './keys';
import { SandboxObjects, type SandboxPaymentIntent } from './objects';
import { loadState, type SandboxState, STATE_VERSION } from './state';
import { StateFile } from '../state-file';

/** How long closing waits for requests in flight (the service's own calls finish; nothing is cut mid-answer). */
const CLOSE_GRACE_MS = 5_000;

export {
  DEFAULT_RETRY_DELAYS_MS,
  SANDBOX_API_VERSION,
  SIGNATURE_HEADER,
  WEBHOOK_TIMEOUT_MS,
  signatureHeader,
  type DeliveryAttempt,
  type DeliveryOutcome,
  type ProcessorEvent,
  type ProcessorEventType,
  type SandboxEvent,
} from './events';
export type {
  SandboxCancellationReason,
  SandboxCard,
  SandboxBalanceTransaction,
  SandboxCharge,
  SandboxChargeObject,
  SandboxDispute,
  SandboxDisputeStatus,
  SandboxFeeDetail,
  SandboxList,
  SandboxPaymentError,
  SandboxPaymentIntent,
  SandboxPaymentIntentStatus,
  SandboxPaymentMethod,
  SandboxRefund,
  SandboxRefundReason,
} from './objects';

export interface ProcessorSandboxOptions {
  port: number;
  /**
   * Default 127.0.0.1. Another interface (`0.0.0.0`) lets whoever reaches it use the sandbox's well-known local
   * keys: pay, refund, read every event.
   */
  host?: string;
  /** The API key that may make every call (`Authorization: Bearer <secretKey>`). */
  secretKey: string;
  /**
   * The key a browser holds (`pk_...`): it may only retrieve and confirm an intent whose `client_secret` it
   * names (`Authorization: Bearer <publishableKey>` or the `key` parameter, as Stripe.js sends it).
   */
  publishableKey: string;
  /** Signs the events (`processor-signature`). */
  webhookSecret: string;
  /** Where events are POSTed. */
  webhookUrl: string;
  /** Delays before each retry of a failed delivery; default `DEFAULT_RETRY_DELAYS_MS` (1, 2, 4, 8, 16 s). */
  retryDelaysMs?: number[];
  /**
   * Where the sandbox keeps its state (objects, idempotency keys, events), loaded at start and saved on every
   * change, so a restart on persisted data finds every intent the service recorded. Undefined: memory only.
   */
  stateDir?: string | undefined;
  /**
   * Drop every event from the start: each is recorded (`GET /sandbox/events`, outcome `dropped`) and never sent, so the
   * service learns of a payment only by asking (attach-intent, the reconciliation). `POST /sandbox/events/drop` turns
   * it on and off while running.
   */
  dropEvents?: boolean | undefined;
}

export interface ProcessorSandbox {
  /** Base URL, e.g. `http://127.0.0.1:12111` (the SDK takes its host and port). */
  url: string;
  port: number;
  /** Stops the server, cancels pending delivery retries, aborts deliveries in flight, and saves the state. */
  close(): Promise<void>;
  /** Every event emitted so far, oldest first, with its delivery attempts and outcome (copies). */
  events(): SandboxEvent[];
  /** Every PaymentIntent created so far, oldest first, in its current state (copies). */
  intents(): SandboxPaymentIntent[];
  /** From now on, record new events as `dropped` and send none (`true`), or send them again (`false`). */
  dropEvents(dropping: boolean): void;
  /** Sends a dropped or failed event now, late: `false` for an unknown one, or one pending or delivered. */
  redeliver(eventId: string): boolean;
}

/**
 * Starts the sandbox and resolves once it listens: with `stateDir`, on the state a previous run left there,
 * delivering again the events that run had not delivered. Rejects on bad options, a state file it cannot
 * read (rather than start empty over it), or a port in use.
 */
export async function startProcessorSandbox(options: ProcessorSandboxOptions): Promise<ProcessorSandbox> {
  const webhookUrl = checkOptions(options);
  const stripeJs = await loadStripeJs();
  const saved = options.stateDir === undefined ? undefined : await loadState(options.stateDir);
  const objects = new SandboxObjects(saved);
  const idempotency = new IdempotencyKeys(saved?.idempotency);
  // The snapshot reads the dispatcher below; it runs only on a save, once everything here exists.
  const stateFile =
    options.stateDir === undefined
      ? undefined
      : new StateFile<SandboxState>(options.stateDir, STATE_VERSION, () => ({ ...objects.save(), idempotency: idempotency.save(), events: dispatcher.list() }));
  const save = async () => {
    await stateFile?.save();
  };
  const dispatcher = new EventDispatcher(
    {
      webhookUrl,
      webhookSecret: options.webhookSecret,
      retryDelaysMs: [...(options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS)],
      // A delivery's outcome is saved in the background; a request's changes are saved before it is answered.
      onChange: () => void save().catch((error: unknown) => console.error('[processor-sandbox] could not save its state', error)),
      dropEvents: options.dropEvents === true,
    },
    saved?.events,
  );
  const api = new Api(new ApiKeys(options.secretKey, options.publishableKey), stripeJs, objects, idempotency, dispatcher, save);
  const server = createServer((req, res) => {
    api.serve(req, res).catch((error: unknown) => {
      // Only a failure to write the response gets here; the request's own errors are answered in serve().
      console.error('[processor-sandbox] could not answer', error);
      res.destroy();
    });
  });
  server.keepAliveTimeout = 5_000;
  const host = options.host ?? '127.0.0.1';
  await listen(server, options.port, host);
  dispatcher.resume();
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${urlHost(host)}:${port}`,
    port,
    close: async () => {
      await closeGracefully(server, { graceMs: CLOSE_GRACE_MS });
      await dispatcher.close();
      await save();
    },
    events: () => dispatcher.list(),
    intents: () => objects.listIntents(),
    dropEvents: (dropping: boolean) => dispatcher.setDropping(dropping),
    redeliver: (eventId: string) => dispatcher.redeliver(eventId),
  };
}

function checkOptions(options: ProcessorSandboxOptions): URL {
  if (options.secretKey.trim() === '') throw new Error('processor sandbox: secretKey must not be empty');
  // Checked as a value too: a caller in plain JavaScript may leave it out.
  if (typeof options.publishableKey !== 'string' || !/^pk_\S+$/.test(options.publishableKey)) {
    throw new Error(`processor sandbox: publishableKey must be a publishable key (pk_...), got ${JSON.stringify(options.publishableKey)}`);
  }
  if (options.publishableKey === options.secretKey) throw new Error('processor sandbox: publishableKey must differ from secretKey');
  if (options.webhookSecret.trim() === '') throw new Error('processor sandbox: webhookSecret must not be empty');
  let webhookUrl: URL;
  try {
    webhookUrl = new URL(options.webhookUrl);
  } catch {
    throw new Error(`processor sandbox: webhookUrl is not a URL: ${options.webhookUrl}`);
  }
  if (webhookUrl.protocol !== 'http:' && webhookUrl.protocol !== 'https:') {
    throw new Error(`processor sandbox: webhookUrl must be http(s): ${options.webhookUrl}`);
  }
  for (const delay of options.retryDelaysMs ?? []) {
    if (!Number.isInteger(delay) || delay < 0) throw new Error(`processor sandbox: retry delays are whole milliseconds >= 0, got ${delay}`);
  }
  return webhookUrl;
}

function urlHost(host: string): string {
  if (host === '' || host === '0.0.0.0' || host === '::') return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}
