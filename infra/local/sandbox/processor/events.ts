/**
 * The events side of the processor sandbox (`index.ts`): events in Stripe's shape, signed with
 * Stripe's webhook scheme and POSTed to the service's webhook endpoint, with retries, like Stripe does.
 *
 * - Each event is sent as JSON with `processor-signature: t=<unix seconds>,v1=<hex HMAC-SHA256>` over
 *   `${t}.${rawBody}`, keyed by the webhook secret (exactly `Stripe-Signature`'s scheme, under the project's
 *   header name), so `stripe.webhooks.constructEvent(rawBody, header, secret)` verifies it.
 * - A 2xx answer is a delivery. Any other status, a connection error or no complete answer within
 *   `WEBHOOK_TIMEOUT_MS` is a failed attempt, retried after each of `retryDelaysMs` in turn, re-signed with a
 *   fresh timestamp. After the last retry the event is recorded as failed; it is never dropped silently.
 * - Every attempt is recorded (time, HTTP status or error), for `GET /sandbox/events` and for tests.
 * - The events can be saved (`list`) and given back to a new dispatcher, which resumes delivering those still
 *   pending (`resume`) with the same event ids, so a restart neither drops an event nor makes a new one of it.
 * - Told to drop events (`setDropping`), it records each new event as `dropped` and sends nothing: a test can lose
 *   every event of a payment, as a misconfigured endpoint at the real processor would. `redeliver` sends a dropped
 *   (or failed) event late, with its own id.
 */
import { createHmac, randomInt } from 'node:crypto';
import { request as httpRequest, type ClientRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import Stripe from 'stripe';

/** The API version the installed stripe SDK pins: events say they were rendered for it, as Stripe's do. */
export const SANDBOX_API_VERSION: string = Stripe.API_VERSION;
/** The header carrying the signature (Stripe calls it `Stripe-Signature`; the scheme is the same). */
export const SIGNATURE_HEADER = 'processor-signature';
/** Delays before the 1st, 2nd, ... retry of a failed delivery. */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [1_000, 2_000, 4_000, 8_000, 16_000];
/** An attempt with no complete answer after this long has failed. */
export const WEBHOOK_TIMEOUT_MS = 10_000;
/** How much of a receiver's answer an attempt keeps, for humans reading `GET /sandbox/events`. */
const KEPT_RESPONSE_CHARS = 500;

export type ProcessorEventType =
  | 'payment_intent.succeeded'
  | 'payment_intent.payment_failed'
  | 'payment_intent.canceled'
  | 'charge.succeeded'
  | 'charge.refunded'
  | 'charge.dispute.created'
  | 'charge.dispute.closed';

/** An event exactly as the webhook endpoint receives it (Stripe's `Event` object). */
export interface ProcessorEvent<T = unknown> {
  id: string;
  object: 'event';
  api_version: string;
  created: number;
  livemode: false;
  pending_webhooks: number;
  /** The API request that caused the event; both null when no API request did (a dispute opened or closed, as at Stripe). */
  request: { id: string | null; idempotency_key: string | null };
  type: ProcessorEventType;
  data: { object: T };
}

export interface DeliveryAttempt {
  /** 1 for the first attempt. */
  attempt: number;
  /** When the attempt started (ISO 8601). */
  at: string;
  durationMs: number;
  /** The receiver's HTTP status; null when there was none (connection error, timeout). */
  status: number | null;
  /** Why the attempt failed without a status; null otherwise. */
  error: string | null;
  /** The start of the receiver's answer body. */
  responseBody: string | null;
}

/** `pending`: not delivered yet, more attempts to come (or the sandbox closed first); `dropped`: never sent (`setDropping`). */
export type DeliveryOutcome = 'pending' | 'delivered' | 'failed' | 'dropped';

/** An event the sandbox emitted, with its delivery history. */
export interface SandboxEvent {
  event: ProcessorEvent;
  outcome: DeliveryOutcome;
  attempts: DeliveryAttempt[];
  /** When the next retry is due (ISO 8601), while one is scheduled. */
  nextAttemptAt: string | null;
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A Stripe-looking id: `prefix` + `length` random alphanumerics (`pi_` + 24, `req_` + 14, ...). */
export function randomId(prefix: string, length = 24): string {
  let id = prefix;
  for (let i = 0; i < length; i++) id += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
  return id;
}

/** Stripe's signature header value: `t=<timestamp>,v1=<hex HMAC-SHA256(secret, "<timestamp>.<payload>")>`. */
export function signatureHeader(secret: string, payload: string, timestamp: number): string {
  const signature = createHmac('sha256', secret).update(`${timestamp}.${payload}`, 'utf8').digest('hex');
  return `t=${timestamp},v1=${signature}`;
}

export interface EventDispatcherOptions {
  webhookUrl: URL;
  webhookSecret: string;
  retryDelaysMs: readonly number[];
  timeoutMs?: number;
  /** Called after every change to the events (one emitted, an attempt recorded), to save them. */
  onChange?: () => void;
  /** Start dropping events (see {@link EventDispatcher.setDropping}). */
  dropEvents?: boolean;
}

interface EventRecord {
  event: ProcessorEvent;
  /** The exact bytes that are signed and sent, the same on every attempt. */
  payload: string;
  outcome: DeliveryOutcome;
  attempts: DeliveryAttempt[];
  nextAttemptAt: string | null;
  /** Attempts made before this dispatcher took the event over: a resumed event gets the full retry schedule. */
  attemptsBefore: number;
}

type PostResult = { status: number; responseBody: string } | { error: string };

/** Keeps the emitted events and delivers them. Not exported from the sandbox's public surface. */
export class EventDispatcher {
  private readonly records = new Map<string, EventRecord>();
  private readonly retryTimers = new Set<NodeJS.Timeout>();
  private readonly inFlight = new Set<ClientRequest>();
  private readonly running = new Set<Promise<void>>();
  private closed = false;
  private dropping: boolean;

  /** `saved`: the events of an earlier dispatcher (its `list()`), kept with their ids and delivery history. */
  constructor(
    private readonly options: EventDispatcherOptions,
    saved: readonly SandboxEvent[] = [],
  ) {
    this.dropping = options.dropEvents === true;
    for (const { event, outcome, attempts } of saved) {
      this.records.set(event.id, { event, payload: eventPayload(event), outcome, attempts, nextAttemptAt: null, attemptsBefore: attempts.length });
    }
  }

  /**
   * Records an event whose `data.object` is a snapshot of `object` now. Delivery starts only with
   * `deliver`, which the server calls once the API response that caused the event has been sent.
   */
  create<T>(type: ProcessorEventType, object: T, request: ProcessorEvent['request']): ProcessorEvent<T> {
    const event: ProcessorEvent<T> = {
      id: randomId('evt_'),
      object: 'event',
      api_version: SANDBOX_API_VERSION,
      created: Math.floor(Date.now() / 1000),
      livemode: false,
      pending_webhooks: 1,
      request: { ...request },
      type,
      data: { object: structuredClone(object) },
    };
    this.records.set(event.id, { event, payload: eventPayload(event), outcome: 'pending', attempts: [], nextAttemptAt: null, attemptsBefore: 0 });
    this.options.onChange?.();
    return event;
  }

  /** Starts delivering these events, each on its own (different events are delivered concurrently); drops them instead while dropping. */
  deliver(eventIds: readonly string[]): void {
    for (const id of eventIds) {
      const record = this.records.get(id);
      if (record === undefined || record.outcome !== 'pending' || record.attempts.length > 0) continue;
      if (this.dropping) {
        record.outcome = 'dropped';
        this.options.onChange?.();
      } else {
        this.attempt(record);
      }
    }
  }

  /** Whether new events are dropped (recorded as `dropped`, never sent) from now on. */
  setDropping(dropping: boolean): void {
    this.dropping = dropping;
  }

  get droppingEvents(): boolean {
    return this.dropping;
  }

  /**
   * Sends a dropped or failed event now, as a late delivery (same id, same body, a fresh signature; the retry schedule
   * again): `false` for an unknown event or one that is pending or delivered.
   */
  redeliver(eventId: string): boolean {
    const record = this.records.get(eventId);
    if (record === undefined || (record.outcome !== 'dropped' && record.outcome !== 'failed') || this.closed) return false;
    record.outcome = 'pending';
    record.attemptsBefore = record.attempts.length;
    this.attempt(record);
    return true;
  }

  /** Starts delivering again every event still pending (those an earlier dispatcher had not delivered). */
  resume(): void {
    for (const record of this.records.values()) {
      if (record.outcome === 'pending') this.attempt(record);
    }
  }

  /** Every event so far, oldest first, with its delivery history (copies). */
  list(): SandboxEvent[] {
    return [...this.records.values()].map(({ event, outcome, attempts, nextAttemptAt }) =>
      structuredClone({ event, outcome, attempts, nextAttemptAt }),
    );
  }

  /** Cancels scheduled retries and aborts attempts in flight; events not delivered yet stay `pending`. */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.retryTimers) clearTimeout(timer);
    this.retryTimers.clear();
    for (const record of this.records.values()) record.nextAttemptAt = null;
    for (const request of this.inFlight) request.destroy(new Error('the sandbox closed before the receiver answered'));
    await Promise.allSettled([...this.running]);
  }

  private attempt(record: EventRecord): void {
    if (this.closed) return;
    record.nextAttemptAt = null;
    const attempt = record.attempts.length + 1;
    const startedAt = Date.now();
    const signature = signatureHeader(this.options.webhookSecret, record.payload, Math.floor(startedAt / 1000));
    const running = this.post(record.payload, signature).then((result) => {
      const delivered = 'status' in result && result.status >= 200 && result.status < 300;
      record.attempts.push({
        attempt,
        at: new Date(startedAt).toISOString(),
        durationMs: Date.now() - startedAt,
        status: 'status' in result ? result.status : null,
        error: 'error' in result ? result.error : null,
        responseBody: 'status' in result ? result.responseBody : null,
      });
      const delay = this.options.retryDelaysMs[attempt - 1 - record.attemptsBefore];
      if (delivered) record.outcome = 'delivered';
      else if (delay === undefined) record.outcome = 'failed';
      else if (!this.closed) this.retryAfter(record, delay);
      this.options.onChange?.();
    });
    this.running.add(running);
    void running.finally(() => this.running.delete(running));
  }

  private retryAfter(record: EventRecord, delayMs: number): void {
    record.nextAttemptAt = new Date(Date.now() + delayMs).toISOString();
    const timer = setTimeout(() => {
      this.retryTimers.delete(timer);
      this.attempt(record);
    }, delayMs);
    this.retryTimers.add(timer);
  }

  /** One POST of the payload; resolves with the receiver's status or the reason there is none, never rejects. */
  private post(payload: string, signature: string): Promise<PostResult> {
    const url = this.options.webhookUrl;
    const timeoutMs = this.options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const options: RequestOptions = {
      method: 'POST',
      // One connection per attempt: nothing pooled outlives the sandbox.
      agent: false,
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(payload, 'utf8'),
        'user-agent': 'ProcessorSandbox/1.0 (like Stripe/1.0 (+https://stripe.com/docs/webhooks))',
        [SIGNATURE_HEADER]: signature,
      },
    };
    return new Promise<PostResult>((resolve) => {
      let settled = false;
      const finish = (result: PostResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.inFlight.delete(request);
        resolve(result);
      };
      const request = send(url, options, (response: IncomingMessage) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          if (body.length < KEPT_RESPONSE_CHARS) body += chunk;
        });
        response.on('end', () => finish({ status: response.statusCode ?? 0, responseBody: body.slice(0, KEPT_RESPONSE_CHARS) }));
        response.on('error', (error) => finish({ error: describeError(error) }));
        response.on('close', () => finish({ error: 'the connection closed before the answer was complete' }));
      });
      const timer = setTimeout(() => request.destroy(new Error(`no complete answer within ${timeoutMs} ms`)), timeoutMs);
      request.on('error', (error) => finish({ error: describeError(error) }));
      this.inFlight.add(request);
      request.end(payload);
    });
  }
}

/** Stripe sends its events pretty-printed; the signature covers these exact bytes. */
function eventPayload(event: ProcessorEvent): string {
  return JSON.stringify(event, null, 2);
}

function describeError(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  // Node reports a refused connection to a name with several addresses as an AggregateError without a message.
  const message =
    error.message || (error instanceof AggregateError ? error.errors.map((inner: unknown) => String(inner)).join('; ') : '') || 'request failed';
  return code !== undefined && !message.includes(code) ? `${code}: ${message}` : message;
}
