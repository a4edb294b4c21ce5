/**
 * The local SANDBOX PROCESSOR: an HTTP server that speaks the subset of Stripe's REST API (v1) the service
 * uses, so the real `stripe` SDK talks to it unchanged (`new Stripe(secretKey, { host, port, protocol: 'http' })`),
 * and that sends Stripe-signed events to the service's webhook endpoint (`processor-sandbox-events.ts`).
 *
 * Stripe's API served here:
 *   POST /v1/payment_intents                create (requires_payment_method)
 *   GET  /v1/payment_intents/:id            retrieve
 *   POST /v1/payment_intents/:id/confirm    pm_card_visa succeeds, pm_card_chargeDeclined is declined (402)
 *   POST /v1/payment_intents/:id/cancel
 *   POST /v1/refunds                        by payment_intent or charge, full or partial
 * Sandbox-only:
 *   POST /sandbox/payment_intents/:id/dispute   the cardholder disputes the payment (charge.dispute.created)
 *   GET  /sandbox/events                        every event with its delivery attempts (no auth: for humans)
 *
 * As at Stripe: every /v1 request (and the dispute trigger) needs `Authorization: Bearer <secretKey>`; bodies are
 * form-encoded (`metadata[k]=v`, `payment_method_types[0]=card`); errors are `{ error: { type, code,
 * message, param } }` with Stripe's statuses; a POST's `Idempotency-Key` (scoped to the secret key, kept 24 h
 * in memory) replays the first response (`Idempotent-Replayed: true`) or, with other parameters, answers 400
 * `idempotency_error`. Events are delivered after the response that caused them has been sent.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listen, readBody } from './http-server';
import {
  DEFAULT_RETRY_DELAYS_MS,
  EventDispatcher,
  randomId,
  SANDBOX_API_VERSION,
  type ProcessorEvent,
  type ProcessorEventType,
  type SandboxEvent,
} from './processor-sandbox-events';

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
} from './processor-sandbox-events';

/** Larger request bodies are refused (413); the service's requests are a few hundred bytes. */
const MAX_BODY_BYTES = 1024 * 1024;
/** Stripe keeps idempotency keys for 24 hours. */
const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;
const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

// ---------------------------------------------------------------------------------------------------------
// Public API

export interface ProcessorSandboxOptions {
  port: number;
  host?: string;
  /** The only API key accepted (`Authorization: Bearer <secretKey>`). */
  secretKey: string;
  /** Signs the events (`processor-signature`). */
  webhookSecret: string;
  /** Where events are POSTed. */
  webhookUrl: string;
  /** Delays before each retry of a failed delivery; default `DEFAULT_RETRY_DELAYS_MS` (1, 2, 4, 8, 16 s). */
  retryDelaysMs?: number[];
}

export interface ProcessorSandbox {
  /** Base URL, e.g. `http://127.0.0.1:12111` (the SDK takes its host and port). */
  url: string;
  port: number;
  /** Stops the server, cancels pending delivery retries and aborts deliveries in flight. */
  close(): Promise<void>;
  /** Every event emitted so far, oldest first, with its delivery attempts and outcome (copies). */
  events(): SandboxEvent[];
  /** Every PaymentIntent created so far, oldest first, in its current state (copies). */
  intents(): SandboxPaymentIntent[];
}

/** The statuses a sandbox PaymentIntent can be in (a subset of Stripe's). */
export type SandboxPaymentIntentStatus = 'requires_payment_method' | 'succeeded' | 'canceled';
export type SandboxCancellationReason = 'abandoned' | 'duplicate' | 'fraudulent' | 'requested_by_customer';
export type SandboxRefundReason = 'duplicate' | 'fraudulent' | 'requested_by_customer';

/** Stripe's PaymentIntent object, with the fields the sandbox maintains. */
export interface SandboxPaymentIntent {
  id: string;
  object: 'payment_intent';
  amount: number;
  amount_capturable: number;
  amount_received: number;
  automatic_payment_methods: { enabled: boolean; allow_redirects?: 'always' | 'never' } | null;
  canceled_at: number | null;
  cancellation_reason: SandboxCancellationReason | null;
  capture_method: 'automatic' | 'automatic_async';
  client_secret: string;
  confirmation_method: 'automatic';
  created: number;
  currency: string;
  customer: null;
  description: string | null;
  last_payment_error: SandboxPaymentError | null;
  latest_charge: string | null;
  livemode: false;
  metadata: Record<string, string>;
  next_action: null;
  payment_method: string | null;
  payment_method_types: string[];
  receipt_email: string | null;
  statement_descriptor: null;
  statement_descriptor_suffix: string | null;
  status: SandboxPaymentIntentStatus;
}

/** Stripe's `last_payment_error` of a declined confirmation (also the body of its 402 error). */
export interface SandboxPaymentError {
  type: 'card_error';
  code: 'card_declined';
  decline_code: string;
  message: string;
  charge: string;
  doc_url: string;
  payment_method: SandboxPaymentMethod;
}

export interface SandboxPaymentMethod {
  id: string;
  object: 'payment_method';
  type: 'card';
  card: SandboxCard;
  created: number;
  customer: null;
  livemode: false;
  metadata: Record<string, string>;
}

export interface SandboxCard {
  brand: string;
  last4: string;
  exp_month: number;
  exp_year: number;
  funding: 'credit';
  country: 'US';
}

export interface SandboxCharge {
  id: string;
  object: 'charge';
  amount: number;
  amount_captured: number;
  amount_refunded: number;
  captured: boolean;
  created: number;
  currency: string;
  description: string | null;
  disputed: boolean;
  failure_code: string | null;
  failure_message: string | null;
  livemode: false;
  metadata: Record<string, string>;
  outcome: { network_status: string; reason: string | null; risk_level: 'normal'; seller_message: string; type: string };
  paid: boolean;
  payment_intent: string;
  payment_method: string;
  payment_method_details: { type: 'card'; card: SandboxCard };
  receipt_email: string | null;
  refunded: boolean;
  statement_descriptor_suffix: string | null;
  status: 'succeeded' | 'failed';
}

export interface SandboxRefund {
  id: string;
  object: 'refund';
  amount: number;
  balance_transaction: null;
  charge: string;
  created: number;
  currency: string;
  metadata: Record<string, string>;
  payment_intent: string;
  reason: SandboxRefundReason | null;
  status: 'succeeded';
}

export interface SandboxDispute {
  id: string;
  object: 'dispute';
  amount: number;
  charge: string;
  created: number;
  currency: string;
  evidence_details: { due_by: number; has_evidence: false; past_due: false; submission_count: 0 };
  is_charge_refundable: false;
  livemode: false;
  metadata: Record<string, string>;
  payment_intent: string;
  reason: 'fraudulent';
  status: 'needs_response';
}

export async function startProcessorSandbox(options: ProcessorSandboxOptions): Promise<ProcessorSandbox> {
  const webhookUrl = checkOptions(options);
  const dispatcher = new EventDispatcher({
    webhookUrl,
    webhookSecret: options.webhookSecret,
    retryDelaysMs: [...(options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS)],
  });
  const processor = new Processor();
  const api = new Api(options.secretKey, processor, dispatcher);
  const server = createServer((req, res) => {
    api.serve(req, res).catch((error: unknown) => {
      // Only a failure to write the response gets here; the request's own errors are answered in serve().
      console.error('[processor-sandbox] could not answer', error);
      res.destroy();
    });
  });
  server.keepAliveTimeout = 5_000;
  await listen(server, options.port, options.host);
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${urlHost(options.host)}:${port}`,
    port,
    close: async () => {
      await new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
      await dispatcher.close();
    },
    events: () => dispatcher.list(),
    intents: () => processor.listIntents(),
  };
}

function checkOptions(options: ProcessorSandboxOptions): URL {
  if (options.secretKey.trim() === '') throw new Error('processor sandbox: secretKey must not be empty');
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

function urlHost(host: string | undefined): string {
  if (host === undefined || host === '' || host === '0.0.0.0' || host === '::') return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}


// ---------------------------------------------------------------------------------------------------------
// Errors in Stripe's shape

interface StripeErrorBody {
  type: 'invalid_request_error' | 'card_error' | 'idempotency_error' | 'api_error';
  message: string;
  code?: string;
  param?: string;
  doc_url?: string;
  [extra: string]: unknown;
}

/**
 * A request refused before it changed anything: answered with Stripe's error shape, and (as at Stripe,
 * where validation failures save no idempotent result) not stored under the request's idempotency key.
 */
class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: StripeErrorBody,
  ) {
    super(body.message);
  }
}

function invalidRequest(message: string, details: { param?: string; code?: string; status?: number; extra?: Record<string, unknown> } = {}): ApiError {
  return new ApiError(details.status ?? 400, {
    type: 'invalid_request_error',
    message,
    ...(details.code !== undefined ? { code: details.code, doc_url: docUrl(details.code) } : {}),
    ...(details.param !== undefined ? { param: details.param } : {}),
    ...details.extra,
  });
}

function docUrl(code: string): string {
  return `https://stripe.com/docs/error-codes/${code.replace(/_/g, '-')}`;
}

function noSuchResource(kind: string, id: string, param: string, status: 400 | 404): ApiError {
  return invalidRequest(`No such ${kind}: '${id}'`, { param, code: 'resource_missing', status });
}

// ---------------------------------------------------------------------------------------------------------
// Form-encoded parameters, parsed the way Stripe's API parses them

type FormValue = string | FormValue[] | FormHash;
interface FormHash {
  [key: string]: FormValue;
}

function isHash(value: FormValue | undefined): value is FormHash {
  return typeof value === 'object' && !Array.isArray(value);
}

function malformed(detail: string): ApiError {
  return invalidRequest(`Invalid request body: ${detail}. The processor sandbox, like Stripe, takes application/x-www-form-urlencoded parameters.`);
}

/**
 * `a=1&b[c]=2&d[]=x&d[]=y&e[0]=z` -> `{ a: '1', b: { c: '2' }, d: ['x', 'y'], e: { '0': 'z' } }`. Indexed
 * keys (`e[0]`) stay hash keys here; a parameter that is a list reads them in index order (`stringArray`).
 * Objects have no prototype, so keys such as `__proto__` are plain keys.
 */
function parseForm(body: string): FormHash {
  const root: FormHash = Object.create(null) as FormHash;
  for (const pair of body.split('&')) {
    if (pair === '') continue;
    const separator = pair.indexOf('=');
    const name = decodeComponent(separator === -1 ? pair : pair.slice(0, separator));
    const value = separator === -1 ? '' : decodeComponent(pair.slice(separator + 1));
    const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(name);
    if (match === null) throw malformed(`invalid parameter name "${name}"`);
    const path = [match[1] ?? '', ...[...(match[2] ?? '').matchAll(/\[([^[\]]*)\]/g)].map((segment) => segment[1] ?? '')];
    const pushing = path.length > 1 && path[path.length - 1] === '';
    const keys = pushing ? path.slice(0, -1) : path;
    if (keys.includes('')) throw malformed(`invalid parameter name "${name}"`);
    let node = root;
    for (const key of keys.slice(0, -1)) {
      const existing = node[key];
      if (existing === undefined) {
        const child = Object.create(null) as FormHash;
        node[key] = child;
        node = child;
      } else if (isHash(existing)) {
        node = existing;
      } else {
        throw malformed(`"${name}" conflicts with another parameter of the same name`);
      }
    }
    const leaf = keys[keys.length - 1] ?? '';
    const existing = node[leaf];
    if (pushing) {
      if (existing === undefined) node[leaf] = [value];
      else if (Array.isArray(existing)) existing.push(value);
      else throw malformed(`"${name}" conflicts with another parameter of the same name`);
    } else if (existing === undefined || typeof existing === 'string') {
      node[leaf] = value; // a repeated scalar: the last one wins, as in Stripe's (Rack's) parser
    } else {
      throw malformed(`"${name}" conflicts with another parameter of the same name`);
    }
  }
  return root;
}

function decodeComponent(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    throw malformed('bad percent-encoding');
  }
}

/** A canonical text of parsed parameters (key order ignored), to compare requests under one idempotency key. */
function canonical(value: FormValue): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  return `{${Object.keys(value)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonical(value[key] ?? '')}`)
    .join(',')}}`;
}

const CURRENCIES = new Set(Intl.supportedValuesOf('currency').map((code) => code.toLowerCase()));
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Typed, Stripe-worded access to one level of parameters (`prefix` names nested ones: `a[b]`). */
class Params {
  constructor(
    private readonly hash: FormHash,
    allowed: readonly string[],
    private readonly prefix = '',
  ) {
    for (const key of Object.keys(hash)) {
      if (allowed.includes(key)) continue;
      if (key === 'expand' && prefix === '') {
        // Stripe accepts it everywhere; answering unexpanded objects instead would mislead the caller.
        throw invalidRequest('The processor sandbox does not implement expand: it returns objects with ids, unexpanded.', { param: 'expand', code: 'parameter_unknown' });
      }
      throw invalidRequest(`Received unknown parameter: ${this.name(key)}`, { param: this.name(key), code: 'parameter_unknown' });
    }
  }

  has(key: string): boolean {
    return this.hash[key] !== undefined;
  }

  name(key: string): string {
    return this.prefix === '' ? key : `${this.prefix}[${key}]`;
  }

  /** undefined when absent, '' when sent empty (Stripe's "unset"). */
  optionalString(key: string, maxLength = 5_000): string | undefined {
    const value = this.hash[key];
    if (value === undefined) return undefined;
    if (typeof value !== 'string') throw invalidRequest(`Invalid string: ${this.name(key)} must be a string, not a list or hash`, { param: this.name(key) });
    if (value.length > maxLength) {
      throw invalidRequest(`Invalid string: ${this.name(key)} must be at most ${maxLength} characters`, { param: this.name(key) });
    }
    return value;
  }

  requiredString(key: string): string {
    const value = this.optionalString(key);
    if (value === undefined) throw missingParam(this.name(key));
    if (value === '') throw emptyParam(this.name(key));
    return value;
  }

  optionalInteger(key: string, minimum: number): number | undefined {
    const text = this.optionalString(key);
    if (text === undefined) return undefined;
    if (text === '') throw emptyParam(this.name(key));
    const value = Number(text);
    if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(value)) {
      throw invalidRequest(`Invalid integer: ${text}`, { param: this.name(key), code: 'parameter_invalid_integer' });
    }
    if (value < minimum) {
      throw invalidRequest(`This value must be greater than or equal to ${minimum}.`, { param: this.name(key), code: 'parameter_invalid_integer' });
    }
    return value;
  }

  requiredInteger(key: string, minimum: number): number {
    const value = this.optionalInteger(key, minimum);
    if (value === undefined) throw missingParam(this.name(key));
    return value;
  }

  optionalBoolean(key: string): boolean | undefined {
    const text = this.optionalString(key);
    if (text === undefined) return undefined;
    if (text !== 'true' && text !== 'false') throw invalidRequest(`Invalid boolean: ${text}`, { param: this.name(key) });
    return text === 'true';
  }

  optionalEnum<T extends string>(key: string, values: readonly T[]): T | undefined {
    const text = this.optionalString(key);
    if (text === undefined || text === '') return undefined;
    if (!(values as readonly string[]).includes(text)) {
      throw invalidRequest(`Invalid ${this.name(key)}: must be one of ${listing(values)}`, { param: this.name(key) });
    }
    return text as T;
  }

  optionalHash(key: string, allowed: readonly string[]): Params | undefined {
    const value = this.hash[key];
    if (value === undefined) return undefined;
    if (!isHash(value)) throw invalidRequest(`Invalid object: ${this.name(key)} must be a hash`, { param: this.name(key) });
    return new Params(value, allowed, this.name(key));
  }

  /** A list sent as `k[]=a&k[]=b` or `k[0]=a&k[1]=b`. */
  optionalStringArray(key: string): string[] | undefined {
    const value = this.hash[key];
    if (value === undefined) return undefined;
    let items: FormValue[];
    if (Array.isArray(value)) {
      items = value;
    } else if (isHash(value) && Object.keys(value).every((index) => /^\d+$/.test(index))) {
      items = Object.keys(value)
        .sort((a, b) => Number(a) - Number(b))
        .map((index) => value[index] ?? '');
    } else {
      throw invalidRequest(`Invalid array: ${this.name(key)} must be a list`, { param: this.name(key) });
    }
    if (items.length === 0) throw emptyParam(this.name(key));
    return items.map((item, index) => {
      if (typeof item !== 'string' || item === '') {
        throw invalidRequest(`Invalid array: ${this.name(key)}[${index}] must be a non-empty string`, { param: this.name(key) });
      }
      return item;
    });
  }

  /** Stripe's metadata rules: at most 50 keys of up to 40 characters, string values of up to 500; '' unsets. */
  optionalMetadata(key: string): Record<string, string> | undefined {
    const value = this.hash[key];
    if (value === undefined) return undefined;
    if (value === '') return {};
    if (!isHash(value)) throw invalidRequest(`Invalid object: ${this.name(key)} must be a hash of strings`, { param: this.name(key) });
    const entries = Object.entries(value);
    if (entries.length > 50) throw invalidRequest(`Invalid ${this.name(key)}: you can specify up to 50 keys`, { param: this.name(key) });
    const kept: Array<[string, string]> = [];
    for (const [metadataKey, metadataValue] of entries) {
      const param = `${this.name(key)}[${metadataKey}]`;
      if (metadataKey.length > 40) {
        throw invalidRequest(`Metadata keys can have up to 40 characters, but you passed in a key that is ${metadataKey.length} characters. Invalid key: ${metadataKey}`, { param });
      }
      if (typeof metadataValue !== 'string') throw invalidRequest(`Invalid string: ${param} must be a string`, { param });
      if (metadataValue.length > 500) {
        throw invalidRequest(`Metadata values can have up to 500 characters, but you passed in a value that is ${metadataValue.length} characters.`, { param });
      }
      if (metadataValue !== '') kept.push([metadataKey, metadataValue]);
    }
    // fromEntries defines own properties, so even a key such as `__proto__` is kept as sent.
    return Object.fromEntries(kept);
  }
}

function missingParam(param: string): ApiError {
  return invalidRequest(`Missing required param: ${param}.`, { param, code: 'parameter_missing' });
}

function emptyParam(param: string): ApiError {
  return invalidRequest(
    `You passed an empty string for '${param}'. We assume empty values are an attempt to unset a parameter; however '${param}' cannot be unset. You should remove '${param}' from your request or supply a non-empty value.`,
    { param, code: 'parameter_invalid_empty' },
  );
}

function listing(values: readonly string[]): string {
  return values.length < 2 ? values.join('') : `${values.slice(0, -1).join(', ')}, or ${values[values.length - 1]}`;
}

// ---------------------------------------------------------------------------------------------------------
// The processor: objects and their state changes

/** A handler's answer: it ran (changed state or not), so an idempotency key stores it. */
interface ApiResult {
  status: number;
  body: unknown;
}

/** What a handler knows of its request, and how it emits events (delivered once the response is sent). */
interface RequestContext {
  emit(type: ProcessorEventType, object: unknown, options?: { fromApiRequest: boolean }): void;
}

/** Stripe's test PaymentMethods the sandbox knows. */
const TEST_CARDS: Record<string, { brand: string; last4: string; declineCode?: string }> = {
  pm_card_visa: { brand: 'visa', last4: '4242' },
  pm_card_chargeDeclined: { brand: 'visa', last4: '0002', declineCode: 'generic_decline' },
};

const CONFIRMABLE: readonly string[] = ['requires_payment_method', 'requires_confirmation'];
const CANCELABLE: readonly string[] = ['requires_payment_method', 'requires_capture', 'requires_confirmation', 'requires_action', 'processing'];
const CANCELLATION_REASONS = ['duplicate', 'fraudulent', 'requested_by_customer', 'abandoned'] as const;
const REFUND_REASONS = ['duplicate', 'fraudulent', 'requested_by_customer'] as const;

function now(): number {
  return Math.floor(Date.now() / 1000);
}

class Processor {
  private readonly intents = new Map<string, SandboxPaymentIntent>();
  private readonly charges = new Map<string, SandboxCharge>();
  private readonly refunds = new Map<string, SandboxRefund>();
  private readonly disputes = new Map<string, SandboxDispute>();

  listIntents(): SandboxPaymentIntent[] {
    return [...this.intents.values()].map((intent) => structuredClone(intent));
  }

  createIntent(form: FormHash): ApiResult {
    const params = new Params(form, [
      'amount',
      'currency',
      'receipt_email',
      'statement_descriptor_suffix',
      'description',
      'metadata',
      'automatic_payment_methods',
      'payment_method_types',
      'capture_method',
    ]);
    const amount = params.requiredInteger('amount', 1);
    const currency = params.requiredString('currency').toLowerCase();
    if (!CURRENCIES.has(currency)) throw invalidRequest(`Invalid currency: ${currency}.`, { param: 'currency' });
    const receiptEmail = receiptEmailParam(params);
    const suffix = params.optionalString('statement_descriptor_suffix');
    if (suffix !== undefined && suffix !== '') {
      if (suffix.length > 22) {
        throw invalidRequest('The statement descriptor suffix must be at most 22 characters long.', { param: 'statement_descriptor_suffix' });
      }
      if (/[<>\\'"*]/.test(suffix)) {
        throw invalidRequest('The statement descriptor suffix cannot contain any of the special characters < > \\ \' " *.', {
          param: 'statement_descriptor_suffix',
        });
      }
    }
    const description = params.optionalString('description', 1_000);
    const metadata = params.optionalMetadata('metadata') ?? {};
    const automatic = params.optionalHash('automatic_payment_methods', ['enabled', 'allow_redirects']);
    const automaticEnabled = automatic?.optionalBoolean('enabled');
    if (automatic !== undefined && automaticEnabled === undefined) throw missingParam('automatic_payment_methods[enabled]');
    const allowRedirects = automatic?.optionalEnum('allow_redirects', ['always', 'never'] as const);
    const types = params.optionalStringArray('payment_method_types');
    if (automaticEnabled === true && types !== undefined) {
      throw invalidRequest('You may only specify one of these parameters: automatic_payment_methods, payment_method_types.', {
        param: 'payment_method_types',
        code: 'parameters_exclusive',
      });
    }
    const captureMethod = params.optionalEnum('capture_method', ['automatic', 'automatic_async', 'manual'] as const);
    if (captureMethod === 'manual') {
      throw invalidRequest('The processor sandbox does not implement capture_method=manual (separate authorization and capture).', {
        param: 'capture_method',
      });
    }

    const id = randomId('pi_');
    const automaticPaymentMethods =
      types !== undefined && automaticEnabled !== true
        ? automaticEnabled === false
          ? { enabled: false }
          : null
        : { enabled: automaticEnabled ?? true, ...(allowRedirects !== undefined ? { allow_redirects: allowRedirects } : {}) };
    const intent: SandboxPaymentIntent = {
      id,
      object: 'payment_intent',
      amount,
      amount_capturable: 0,
      amount_received: 0,
      automatic_payment_methods: automaticPaymentMethods,
      canceled_at: null,
      cancellation_reason: null,
      capture_method: captureMethod ?? 'automatic_async',
      client_secret: `${id}_secret_${randomId('', 25)}`,
      confirmation_method: 'automatic',
      created: now(),
      currency,
      customer: null,
      description: description === undefined || description === '' ? null : description,
      last_payment_error: null,
      latest_charge: null,
      livemode: false,
      metadata,
      next_action: null,
      payment_method: null,
      payment_method_types: types ?? ['card'],
      receipt_email: receiptEmail ?? null,
      statement_descriptor: null,
      statement_descriptor_suffix: suffix === undefined || suffix === '' ? null : suffix,
      status: 'requires_payment_method',
    };
    this.intents.set(id, intent);
    return { status: 200, body: intent };
  }

  retrieveIntent(id: string, query: FormHash): ApiResult {
    new Params(query, ['client_secret']); // the secret key may read any intent, so client_secret changes nothing
    return { status: 200, body: this.intentFromPath(id) };
  }

  confirmIntent(id: string, form: FormHash, context: RequestContext): ApiResult {
    const params = new Params(form, ['payment_method', 'receipt_email']);
    const paymentMethodId = params.optionalString('payment_method');
    const receiptEmail = receiptEmailParam(params);
    const intent = this.intentFromPath(id);
    if (intent.status === 'succeeded') {
      throw unexpectedState(intent, 'You cannot confirm this PaymentIntent because it has already succeeded after being previously confirmed.');
    }
    if (!CONFIRMABLE.includes(intent.status)) {
      throw unexpectedState(
        intent,
        `You cannot confirm this PaymentIntent because it has a status of ${intent.status}. Only a PaymentIntent with one of the following statuses may be confirmed: ${CONFIRMABLE.join(', ')}.`,
      );
    }
    if (paymentMethodId === undefined || paymentMethodId === '') {
      throw unexpectedState(
        intent,
        "You cannot confirm this PaymentIntent because it's missing a payment method. You can either update the PaymentIntent with a payment method and then confirm it again, or confirm it again directly with a payment method.",
      );
    }
    const card = TEST_CARDS[paymentMethodId];
    if (card === undefined) throw noSuchResource('PaymentMethod', paymentMethodId, 'payment_method', 400);
    if (!intent.payment_method_types.includes('card')) {
      throw invalidRequest(
        `The PaymentMethod provided (card) is not allowed for this PaymentIntent. Please attach a PaymentMethod of one of the following types: ${intent.payment_method_types.join(', ')}. Alternatively update the allowed payment_method_types for this PaymentIntent to include "card".`,
        { param: 'payment_method', code: 'payment_intent_incompatible_payment_method' },
      );
    }

    const created = now();
    const cardDetails: SandboxCard = { brand: card.brand, last4: card.last4, exp_month: 12, exp_year: new Date().getUTCFullYear() + 3, funding: 'credit', country: 'US' };
    const paymentMethod: SandboxPaymentMethod = {
      id: randomId('pm_'),
      object: 'payment_method',
      type: 'card',
      card: cardDetails,
      created,
      customer: null,
      livemode: false,
      metadata: {},
    };
    if (receiptEmail !== undefined) intent.receipt_email = receiptEmail;
    const declined = card.declineCode !== undefined;
    const charge: SandboxCharge = {
      id: randomId('ch_'),
      object: 'charge',
      amount: intent.amount,
      amount_captured: declined ? 0 : intent.amount,
      amount_refunded: 0,
      captured: !declined,
      created,
      currency: intent.currency,
      description: intent.description,
      disputed: false,
      failure_code: declined ? 'card_declined' : null,
      failure_message: declined ? 'Your card was declined.' : null,
      livemode: false,
      metadata: { ...intent.metadata },
      outcome: declined
        ? {
            network_status: 'declined_by_network',
            reason: card.declineCode ?? null,
            risk_level: 'normal',
            seller_message: 'The bank did not return any further details with this decline.',
            type: 'issuer_declined',
          }
        : { network_status: 'approved_by_network', reason: null, risk_level: 'normal', seller_message: 'Payment complete.', type: 'authorized' },
      paid: !declined,
      payment_intent: intent.id,
      payment_method: paymentMethod.id,
      payment_method_details: { type: 'card', card: cardDetails },
      receipt_email: intent.receipt_email,
      refunded: false,
      statement_descriptor_suffix: intent.statement_descriptor_suffix,
      status: declined ? 'failed' : 'succeeded',
    };
    this.charges.set(charge.id, charge);
    intent.latest_charge = charge.id;

    if (declined) {
      const error: SandboxPaymentError = {
        type: 'card_error',
        code: 'card_declined',
        decline_code: card.declineCode ?? 'generic_decline',
        message: 'Your card was declined.',
        charge: charge.id,
        doc_url: docUrl('card_declined'),
        payment_method: paymentMethod,
      };
      intent.status = 'requires_payment_method';
      intent.payment_method = null;
      intent.last_payment_error = error;
      context.emit('payment_intent.payment_failed', intent);
      return { status: 402, body: { error: { ...error, payment_intent: intent } } };
    }

    intent.status = 'succeeded';
    intent.amount_received = intent.amount;
    intent.payment_method = paymentMethod.id;
    intent.last_payment_error = null;
    context.emit('charge.succeeded', charge);
    context.emit('payment_intent.succeeded', intent);
    return { status: 200, body: intent };
  }

  cancelIntent(id: string, form: FormHash, context: RequestContext): ApiResult {
    const params = new Params(form, ['cancellation_reason']);
    const reason = params.optionalEnum('cancellation_reason', CANCELLATION_REASONS);
    const intent = this.intentFromPath(id);
    if (!CANCELABLE.includes(intent.status)) {
      throw unexpectedState(
        intent,
        `You cannot cancel this PaymentIntent because it has a status of ${intent.status}. Only a PaymentIntent with one of the following statuses may be canceled: ${CANCELABLE.join(', ')}.`,
      );
    }
    intent.status = 'canceled';
    intent.canceled_at = now();
    intent.cancellation_reason = reason ?? null;
    context.emit('payment_intent.canceled', intent);
    return { status: 200, body: intent };
  }

  createRefund(form: FormHash, context: RequestContext): ApiResult {
    const params = new Params(form, ['payment_intent', 'charge', 'amount', 'reason', 'metadata']);
    const intentId = params.optionalString('payment_intent');
    const chargeId = params.optionalString('charge');
    const requested = params.optionalInteger('amount', 1);
    const reason = params.optionalEnum('reason', REFUND_REASONS);
    const metadata = params.optionalMetadata('metadata') ?? {};
    if ((intentId === undefined || intentId === '') && (chargeId === undefined || chargeId === '')) {
      throw invalidRequest('One of the following params should be provided for this request: payment_intent or charge.', { code: 'parameter_missing' });
    }
    let charge: SandboxCharge | undefined;
    if (chargeId !== undefined && chargeId !== '') {
      charge = this.charges.get(chargeId);
      if (charge === undefined) throw noSuchResource('charge', chargeId, 'charge', 400);
      if (intentId !== undefined && intentId !== '' && charge.payment_intent !== intentId) {
        throw invalidRequest(`The charge ${chargeId} does not belong to the PaymentIntent ${intentId}.`, { param: 'charge' });
      }
      if (charge.status !== 'succeeded') {
        throw invalidRequest(`Charge ${charge.id} has not succeeded, so it cannot be refunded.`, { param: 'charge', code: 'charge_not_refundable' });
      }
    } else if (intentId !== undefined) {
      const intent = this.intents.get(intentId);
      if (intent === undefined) throw noSuchResource('payment_intent', intentId, 'payment_intent', 400);
      if (intent.status !== 'succeeded' || intent.latest_charge === null) {
        throw invalidRequest(`This PaymentIntent (${intent.id}) does not have a successful charge to refund (its status is ${intent.status}).`, {
          param: 'payment_intent',
          code: 'payment_intent_unexpected_state',
        });
      }
      charge = this.charges.get(intent.latest_charge);
    }
    if (charge === undefined) throw new Error('a succeeded PaymentIntent without its charge');
    if (charge.disputed) {
      throw invalidRequest(`Charge ${charge.id} has been charged back; cannot issue a refund.`, { code: 'charge_disputed' });
    }
    const remaining = charge.amount - charge.amount_refunded;
    if (remaining === 0) throw invalidRequest(`Charge ${charge.id} has already been refunded.`, { code: 'charge_already_refunded' });
    const amount = requested ?? remaining;
    if (amount > remaining) {
      throw invalidRequest(`Refund amount (${amount}) is greater than unrefunded amount on charge (${remaining}).`, {
        param: 'amount',
        code: 'amount_too_large',
      });
    }

    const refund: SandboxRefund = {
      id: randomId('re_'),
      object: 'refund',
      amount,
      balance_transaction: null,
      charge: charge.id,
      created: now(),
      currency: charge.currency,
      metadata,
      payment_intent: charge.payment_intent,
      reason: reason ?? null,
      status: 'succeeded',
    };
    this.refunds.set(refund.id, refund);
    charge.amount_refunded += amount;
    charge.refunded = charge.amount_refunded === charge.amount;
    context.emit('charge.refunded', charge);
    return { status: 200, body: refund };
  }

  /** Sandbox-only: the cardholder disputes a succeeded payment (as Stripe's test card 0259 would). */
  createDispute(intentId: string, form: FormHash, context: RequestContext): ApiResult {
    new Params(form, []); // takes no parameters: refuses any, as Stripe refuses unknown ones
    const intent = this.intentFromPath(intentId);
    const charge = intent.latest_charge === null ? undefined : this.charges.get(intent.latest_charge);
    if (intent.status !== 'succeeded' || charge === undefined) {
      throw unexpectedState(intent, `Only a succeeded PaymentIntent can be disputed; this one has a status of ${intent.status}.`);
    }
    if (charge.disputed) throw invalidRequest(`Charge ${charge.id} has already been disputed.`, { code: 'charge_disputed' });
    if (charge.refunded) throw invalidRequest(`Charge ${charge.id} has been fully refunded; it cannot be disputed.`, { code: 'charge_already_refunded' });
    const created = now();
    const dispute: SandboxDispute = {
      id: randomId('dp_'),
      object: 'dispute',
      amount: charge.amount,
      charge: charge.id,
      created,
      currency: charge.currency,
      evidence_details: { due_by: created + 7 * 24 * 60 * 60, has_evidence: false, past_due: false, submission_count: 0 },
      is_charge_refundable: false,
      livemode: false,
      metadata: {},
      payment_intent: intent.id,
      reason: 'fraudulent',
      status: 'needs_response',
    };
    this.disputes.set(dispute.id, dispute);
    charge.disputed = true;
    // A dispute comes from the card network, not from an API request: Stripe's event has no request.
    context.emit('charge.dispute.created', dispute, { fromApiRequest: false });
    return { status: 200, body: dispute };
  }

  private intentFromPath(id: string): SandboxPaymentIntent {
    const intent = this.intents.get(id);
    if (intent === undefined) throw noSuchResource('payment_intent', id, 'intent', 404);
    return intent;
  }
}

function receiptEmailParam(params: Params): string | null | undefined {
  const email = params.optionalString('receipt_email', 800);
  if (email === undefined) return undefined;
  if (email === '') return null;
  if (!EMAIL.test(email)) throw invalidRequest(`Invalid email address: ${email}`, { param: 'receipt_email', code: 'email_invalid' });
  return email;
}

function unexpectedState(intent: SandboxPaymentIntent, message: string): ApiError {
  return invalidRequest(message, { code: 'payment_intent_unexpected_state', extra: { payment_intent: structuredClone(intent) } });
}

// ---------------------------------------------------------------------------------------------------------
// HTTP: auth, routing, idempotency, responses

type Route =
  | { kind: 'events' }
  | { kind: 'create_intent' }
  | { kind: 'retrieve_intent'; id: string }
  | { kind: 'confirm_intent'; id: string }
  | { kind: 'cancel_intent'; id: string }
  | { kind: 'create_refund' }
  | { kind: 'dispute'; id: string };

function route(method: string, path: string): Route | undefined {
  if (method === 'GET' && path === '/sandbox/events') return { kind: 'events' };
  if (method === 'POST' && path === '/v1/payment_intents') return { kind: 'create_intent' };
  if (method === 'POST' && path === '/v1/refunds') return { kind: 'create_refund' };
  const intent = /^\/v1\/payment_intents\/([^/]+)(?:\/(confirm|cancel))?$/.exec(path);
  if (intent !== null) {
    const id = decodePathSegment(intent[1] ?? '');
    if (method === 'GET' && intent[2] === undefined) return { kind: 'retrieve_intent', id };
    if (method === 'POST' && intent[2] === 'confirm') return { kind: 'confirm_intent', id };
    if (method === 'POST' && intent[2] === 'cancel') return { kind: 'cancel_intent', id };
  }
  const dispute = /^\/sandbox\/payment_intents\/([^/]+)\/dispute$/.exec(path);
  if (method === 'POST' && dispute !== null) return { kind: 'dispute', id: decodePathSegment(dispute[1] ?? '') };
  return undefined;
}

function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

interface StoredResponse {
  endpoint: string;
  fingerprint: string;
  status: number;
  body: string;
  requestId: string;
  storedAt: number;
}

interface Answer {
  status: number;
  body: string;
  headers: Record<string, string>;
}

class Api {
  private readonly idempotency = new Map<string, StoredResponse>();
  private readonly keyDigest: Buffer;
  private readonly keyScope: string;

  constructor(
    secretKey: string,
    private readonly processor: Processor,
    private readonly dispatcher: EventDispatcher,
  ) {
    this.keyDigest = createHash('sha256').update(secretKey).digest();
    this.keyScope = this.keyDigest.toString('hex');
  }

  async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = randomId('req_', 14);
    const emitted: string[] = [];
    let answer: Answer;
    try {
      answer = await this.answer(req, requestId, emitted);
    } catch (error) {
      if (error instanceof ApiError) {
        answer = { status: error.status, body: json({ error: error.body }), headers: {} };
      } else {
        console.error('[processor-sandbox] request failed', error);
        answer = { status: 500, body: json({ error: { type: 'api_error', message: `The processor sandbox failed: ${String(error)}` } }), headers: {} };
      }
    }
    const idempotencyKey = header(req.headers, 'idempotency-key');
    const body = Buffer.from(answer.body, 'utf8');
    res.writeHead(answer.status, {
      'content-type': 'application/json',
      'content-length': body.length,
      'request-id': requestId,
      'stripe-version': header(req.headers, 'stripe-version') ?? SANDBOX_API_VERSION,
      ...(idempotencyKey !== undefined ? { 'idempotency-key': idempotencyKey } : {}),
      ...answer.headers,
    });
    // Like Stripe, deliver the events of this request only after answering it ('close': sent or aborted).
    if (emitted.length > 0) res.once('close', () => this.dispatcher.deliver(emitted));
    res.end(body);
  }

  private async answer(req: IncomingMessage, requestId: string, emitted: string[]): Promise<Answer> {
    const method = (req.method ?? 'GET').toUpperCase();
    const { path, query } = requestTarget(req.url);
    const raw = await readBody(req, MAX_BODY_BYTES);
    if (raw === 'too-large') throw invalidRequest(`Request body too large (limit ${MAX_BODY_BYTES} bytes).`, { status: 413 });
    const matched = route(method, path);
    if (matched?.kind === 'events') return { status: 200, body: json({ data: this.dispatcher.list() }), headers: {} };
    if (path === '/v1' || path.startsWith('/v1/') || path.startsWith('/sandbox/')) this.authenticate(req.headers);
    if (matched === undefined) {
      throw invalidRequest(
        `Unrecognized request URL (${method}: ${path}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`,
        { status: 404 },
      );
    }
    // A POST's parameters are its form body; a GET's are its query string, as the SDK sends them.
    const form = parseForm(method === 'POST' ? formBody(req.headers, raw) : query);
    const idempotencyKey = method === 'POST' ? header(req.headers, 'idempotency-key') : undefined;
    if (idempotencyKey === undefined) return this.run(matched, form, requestId, null, emitted);

    if (idempotencyKey.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
      throw invalidRequest(`Invalid idempotency key: it must be at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters long.`);
    }
    const scope = `${this.keyScope}:${idempotencyKey}`;
    const endpoint = `${method} ${path}`;
    const fingerprint = canonical(form);
    const stored = this.idempotency.get(scope);
    if (stored !== undefined && Date.now() - stored.storedAt < IDEMPOTENCY_KEY_TTL_MS) {
      if (stored.endpoint !== endpoint) {
        throw idempotencyError(
          `Keys for idempotent requests can only be used for the same endpoint they were first used for ('${stored.endpoint}' vs '${endpoint}'). Try using a key other than '${idempotencyKey}' if you meant to execute a different request.`,
        );
      }
      if (stored.fingerprint !== fingerprint) {
        throw idempotencyError(
          `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${idempotencyKey}' if you meant to execute a different request.`,
        );
      }
      return { status: stored.status, body: stored.body, headers: { 'idempotent-replayed': 'true', 'original-request': stored.requestId } };
    }
    const answer = this.run(matched, form, requestId, idempotencyKey, emitted);
    // Reached only when the handler ran (refusals throw): its result is what the key replays from now on.
    this.idempotency.set(scope, { endpoint, fingerprint, status: answer.status, body: answer.body, requestId, storedAt: Date.now() });
    return answer;
  }

  /** Runs a handler synchronously, so requests never interleave and an idempotency key is never in use twice. */
  private run(matched: Exclude<Route, { kind: 'events' }>, form: FormHash, requestId: string, idempotencyKey: string | null, emitted: string[]): Answer {
    const context: RequestContext = {
      emit: (type, object, options) => {
        const fromApi = options?.fromApiRequest ?? true;
        const event: ProcessorEvent = this.dispatcher.create(type, object, {
          id: fromApi ? requestId : null,
          idempotency_key: fromApi ? idempotencyKey : null,
        });
        emitted.push(event.id);
      },
    };
    let result: ApiResult;
    switch (matched.kind) {
      case 'create_intent':
        result = this.processor.createIntent(form);
        break;
      case 'retrieve_intent':
        result = this.processor.retrieveIntent(matched.id, form);
        break;
      case 'confirm_intent':
        result = this.processor.confirmIntent(matched.id, form, context);
        break;
      case 'cancel_intent':
        result = this.processor.cancelIntent(matched.id, form, context);
        break;
      case 'create_refund':
        result = this.processor.createRefund(form, context);
        break;
      case 'dispute':
        result = this.processor.createDispute(matched.id, form, context);
        break;
    }
    return { status: result.status, body: json(result.body), headers: {} };
  }

  private authenticate(headers: IncomingHttpHeaders): void {
    const authorization = header(headers, 'authorization');
    if (authorization === undefined || authorization.trim() === '') {
      throw invalidRequest(
        "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'). See https://stripe.com/docs/api#authentication for details, or we can help at https://support.stripe.com/.",
        { status: 401 },
      );
    }
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (bearer === null) {
      throw invalidRequest("Invalid Authorization header: use Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY').", { status: 401 });
    }
    const key = bearer[1] ?? '';
    if (!timingSafeEqual(createHash('sha256').update(key).digest(), this.keyDigest)) {
      throw invalidRequest(`Invalid API Key provided: ${redact(key)}`, { status: 401 });
    }
  }
}

function idempotencyError(message: string): ApiError {
  return new ApiError(400, { type: 'idempotency_error', message });
}

/** `sk_test_abcdefgh1234` -> `sk_test_********1234`, as Stripe shows a key it refuses. */
function redact(key: string): string {
  if (key.length <= 12) return '*'.repeat(key.length);
  const prefix = /^[a-z]{2,4}_(?:test_|live_)?/.exec(key)?.[0] ?? '';
  return `${prefix}${'*'.repeat(key.length - prefix.length - 4)}${key.slice(-4)}`;
}

function requestTarget(url: string | undefined): { path: string; query: string } {
  const target = url ?? '/';
  if (!target.startsWith('/')) throw invalidRequest(`Invalid request target: ${target}`);
  const queryStart = target.indexOf('?');
  return queryStart === -1 ? { path: target, query: '' } : { path: target.slice(0, queryStart), query: target.slice(queryStart + 1) };
}

function formBody(headers: IncomingHttpHeaders, raw: Buffer): string {
  if (raw.length === 0) return '';
  const contentType = (header(headers, 'content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (contentType !== 'application/x-www-form-urlencoded') {
    throw malformed(`the content type is "${contentType || 'missing'}"`);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch {
    throw malformed('the body is not valid UTF-8');
  }
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function json(value: unknown): string {
  // Stripe answers with pretty-printed JSON.
  return `${JSON.stringify(value, null, 2)}\n`;
}

