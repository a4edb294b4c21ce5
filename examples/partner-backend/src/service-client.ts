/**
 * A typed client for the payment service's partner API, as a partner's backend keeps one (docs/authentication.md,
 * docs/checkout.md). It owns the three rules every call must follow:
 *
 * - each mutation is signed over the exact bytes sent: the body is serialised once, that string is signed
 *   (`x-svc-hmac`: HMAC-SHA256, lowercase hex) and that same string is sent, on every retry too;
 * - each mutation carries an idempotency key naming its logical operation ({@link idempotencyKeys}), so a retry
 *   (by this client, a restarted process or a second click) can never make a second payment or client;
 * - a retry happens only when the service says the request may be sent again (409 IDEMPOTENCY_KEY_IN_USE, 429,
 *   502, 503, or no answer at all), with the same key and body, after the `Retry-After` it asks for (bounded).
 *
 * Every other answer is returned typed (2xx) or thrown as a {@link ServiceApiError} carrying the service's `code`.
 */
import { createHash, createHmac } from 'node:crypto';

export type TransactionStatus = 'initialized' | 'pending' | 'succeeded' | 'failed' | 'abandoned' | 'refunded' | 'chargeback';

/** `idempotentReplay: true` marks an answer the service replayed: the first answer to the same key and body. */
interface Replayable {
  idempotentReplay?: true;
}

export interface NewClient {
  client_id: string;
  legal_name: string;
  status?: 'active' | 'suspended' | 'pending_kyc';
  partner_fee_percentage?: number;
  partner_fee_flat_usd?: number;
}

export interface Client extends Replayable {
  id: string;
  partner_id: string;
  client_id: string;
  legal_name: string;
  status: 'active' | 'suspended' | 'pending_kyc';
  partner_fee_percentage: number | null;
  partner_fee_flat_usd: number | null;
  created_at: string;
  updated_at: string;
}

/** Amounts in major units (`49.99`); see docs/checkout.md for every field's rules. */
export interface CheckoutRequest {
  partner_id: string;
  client_id: string;
  amount: number;
  currency: string;
  email: string;
  partner_reference: string;
  statement_descriptor_suffix?: string;
  meta?: Record<string, unknown>;
}

export interface CheckoutIntent extends Replayable {
  svc_tx_id: string;
  status: TransactionStatus;
  processor_payment_intent_id: string;
  /** For the processor's payment element in the browser. */
  client_secret: string;
  /** For the processor's client (Stripe.js) in the browser. */
  processor_publishable_key: string;
}

export type InitializeRequest = Omit<CheckoutRequest, 'email' | 'statement_descriptor_suffix'>;

export interface InitializedTransaction extends Replayable {
  svc_tx_id: string;
  status: 'initialized';
}

export interface AttachIntentRequest {
  svc_tx_id: string;
  processor_payment_intent_id: string;
}

export interface AttachedIntent extends Replayable {
  svc_tx_id: string;
  /** `pending`; attaching the same intent again answers the transaction's status now. */
  status: TransactionStatus;
  processor_payment_intent_id: string;
}

/** The spec's Transaction: camelCase, money in major units, fee fields null until the payment succeeds. */
export interface Transaction {
  id: string;
  svcTxId: string;
  partnerId: string;
  partnerName: string;
  clientId: string;
  clientName: string;
  partnerReference: string;
  processorPaymentIntentId: string | null;
  amount: number;
  currency: string;
  status: TransactionStatus;
  processorFeePercent: number | null;
  partnerFeePercent: number | null;
  partnerPayoutPercent: number | null;
  svcEarningPercent: number | null;
  svcEarningAmount: number | null;
  processorFee: number | null;
  platformFee: number | null;
  netAmount: number | null;
  settlementStatus: 'unsettled' | 'queued' | 'paid';
  /** Cumulative, major units (0 without a refund). */
  refundedAmount: number;
  disputedAmount: number;
  disputeStatus: 'needs_response' | 'won' | 'lost' | null;
  meta: Record<string, unknown> | null;
  createdAt: string;
  updatedAt: string;
}

export interface TransactionQuery {
  status?: TransactionStatus;
  client_id?: string;
  partner_reference?: string;
  /** ISO 8601 date or date-time, inclusive. */
  created_from?: string;
  created_to?: string;
  limit?: number;
  /** `next_cursor` of the previous page. */
  cursor?: string;
}

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/** A 400 VALIDATION_ERROR's field and form messages. */
export interface ValidationDetails {
  fieldErrors: Record<string, string[]>;
  formErrors: string[];
}

/** An answer of the service other than 2xx: `code` is the spec's error code, stable for programs to act on. */
export class ServiceApiError extends Error {
  override readonly name = 'ServiceApiError';

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: ValidationDetails,
    /** The service's `Retry-After`, in seconds, when it sent one. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

/** No answer from the service (refused, reset or timed out) on every try: whether the request ran is unknown. */
export class ServiceUnreachableError extends Error {
  override readonly name = 'ServiceUnreachableError';
}

/** The keys must be 1-255 printable ASCII characters (docs/authentication.md). */
const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,255}$/;

/**
 * `<operation>-<value>`. A partner_reference or client_id may hold characters (`ü`, emoji) or a length that a
 * header key cannot; such a value is replaced by its SHA-256, which still names exactly one operation.
 */
function keyFor(operation: string, value: string): string {
  const key = `${operation}-${value}`;
  return IDEMPOTENCY_KEY.test(key) ? key : `${operation}-sha256-${createHash('sha256').update(value).digest('hex')}`;
}

/** The idempotency keys docs/authentication.md recommends: one per logical operation, reused on every retry of it. */
export const idempotencyKeys = {
  checkout: (partnerReference: string) => keyFor('checkout', partnerReference),
  initialize: (partnerReference: string) => keyFor('init', partnerReference),
  attach: (svcTxId: string) => keyFor('attach', svcTxId),
  client: (clientId: string) => keyFor('client', clientId),
};

/** What the service signs and compares: HMAC-SHA256 of the raw body string, lowercase hex. */
export const signBody = (hmacSecret: string, rawBody: string) => createHmac('sha256', hmacSecret).update(rawBody, 'utf8').digest('hex');

export interface ServiceClientOptions {
  /** The service's base URL, ending in `/api/v1` (locally `http://localhost:3000/api/v1`). */
  baseUrl: string;
  apiKey: string;
  hmacSecret: string;
  /** Tries per call, the first included (default 4). */
  maxAttempts?: number;
  /** The longest wait before a retry, whatever `Retry-After` asks (default 5 s): a caller is waiting. */
  maxRetryDelayMs?: number;
  /** Per try (default 30 s: the service cuts a request off before its 29 s function timeout). */
  timeoutMs?: number;
  /** Told before each retry, for the partner's logs. */
  onRetry?: (retry: { path: string; attempt: number; code: string; delayMs: number }) => void;
}

/** Service answers that mean "send the same request again later"; any other error would only repeat. */
const isRetryable = (error: ServiceApiError) =>
  error.status === 429 || error.status === 502 || error.status === 503 || (error.status === 409 && error.code === 'IDEMPOTENCY_KEY_IN_USE');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class ServiceClient {
  private readonly maxAttempts: number;
  private readonly maxRetryDelayMs: number;
  private readonly timeoutMs: number;

  constructor(private readonly options: ServiceClientOptions) {
    this.maxAttempts = options.maxAttempts ?? 4;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 5_000;
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** Registers a merchant under the key's partner (a partner-scoped key; `partner_id` is not sent). */
  createClient(client: NewClient, idempotencyKey = idempotencyKeys.client(client.client_id)): Promise<Client> {
    return this.mutate('/clients', client, idempotencyKey);
  }

  /** The recommended flow: the transaction and its payment intent in one call. */
  checkoutIntent(request: CheckoutRequest, idempotencyKey = idempotencyKeys.checkout(request.partner_reference)): Promise<CheckoutIntent> {
    return this.mutate('/transactions/checkout-intent', request, idempotencyKey);
  }

  /** Legacy flow, step 1: the transaction only (no intent, no statement descriptor). */
  initialize(request: InitializeRequest, idempotencyKey = idempotencyKeys.initialize(request.partner_reference)): Promise<InitializedTransaction> {
    return this.mutate('/transactions/initialize', request, idempotencyKey);
  }

  /** Legacy flow, step 2: links an intent the partner created at the service's processor account. */
  attachIntent(request: AttachIntentRequest, idempotencyKey = idempotencyKeys.attach(request.svc_tx_id)): Promise<AttachedIntent> {
    return this.mutate('/transactions/attach-intent', request, idempotencyKey);
  }

  /** The service's own record of a payment: what reconciliation trusts (404 TX_NOT_FOUND if not the partner's). */
  getTransaction(svcTxId: string): Promise<Transaction> {
    return this.send('GET', `/transactions/${encodeURIComponent(svcTxId)}`);
  }

  listTransactions(query: TransactionQuery = {}): Promise<Page<Transaction>> {
    const search = new URLSearchParams(Object.entries(query).map(([name, value]): [string, string] => [name, String(value)]));
    return this.send('GET', `/transactions${search.size === 0 ? '' : `?${search}`}`);
  }

  /** Serialises once, so the bytes signed are the bytes sent, on every try. */
  private mutate<T>(path: string, body: unknown, idempotencyKey: string): Promise<T> {
    const rawBody = JSON.stringify(body);
    return this.send('POST', path, {
      rawBody,
      headers: { 'content-type': 'application/json', 'x-svc-hmac': signBody(this.options.hmacSecret, rawBody), 'idempotency-key': idempotencyKey },
    });
  }

  private async send<T>(method: 'GET' | 'POST', path: string, mutation?: { rawBody: string; headers: Record<string, string> }): Promise<T> {
    const init = { method, headers: { 'x-api-key': this.options.apiKey, ...mutation?.headers }, body: mutation?.rawBody };
    for (let attempt = 1; ; attempt++) {
      let response: Response;
      try {
        response = await fetch(`${this.options.baseUrl}${path}`, { ...init, signal: AbortSignal.timeout(this.timeoutMs) });
      } catch (noAnswer) {
        // Refused, reset or timed out: the request may or may not have run, and its idempotency key makes sending it again safe.
        if (attempt >= this.maxAttempts) throw new ServiceUnreachableError(`No answer from the service to ${method} ${path}`, { cause: noAnswer });
        await this.pause({ path, attempt, code: (noAnswer as Error).name });
        continue;
      }
      const answer = await readAnswer(response);
      if (!(answer instanceof ServiceApiError)) return answer as T;
      if (!isRetryable(answer) || attempt >= this.maxAttempts) throw answer;
      await this.pause({ path, attempt, code: answer.code, retryAfterSeconds: answer.retryAfterSeconds });
    }
  }

  /** Waits `Retry-After` when the service gave one, else 250 ms doubling; never longer than `maxRetryDelayMs`. */
  private async pause(retry: { path: string; attempt: number; code: string; retryAfterSeconds?: number }): Promise<void> {
    const wanted = retry.retryAfterSeconds === undefined ? 250 * 2 ** (retry.attempt - 1) : retry.retryAfterSeconds * 1000;
    const delayMs = Math.min(wanted, this.maxRetryDelayMs);
    this.options.onRetry?.({ path: retry.path, attempt: retry.attempt, code: retry.code, delayMs });
    await sleep(delayMs);
  }
}

/** The JSON body of a 2xx, or the error the answer describes (`{ error, code, details? }`). */
async function readAnswer(response: Response): Promise<unknown | ServiceApiError> {
  const text = await response.text();
  let body: { error?: string; code?: string; details?: ValidationDetails } | undefined;
  try {
    body = JSON.parse(text);
  } catch {
    // Not the service's JSON (a proxy's error page, say): reported below under a code of this client's own.
  }
  if (response.ok && body !== undefined) return body;
  const retryAfterSeconds = Number.parseInt(response.headers.get('retry-after') ?? '', 10);
  return new ServiceApiError(
    response.status,
    body?.code ?? 'UNEXPECTED_RESPONSE',
    body?.error ?? `HTTP ${response.status}: ${text.slice(0, 200)}`,
    body?.details,
    Number.isNaN(retryAfterSeconds) ? undefined : retryAfterSeconds,
  );
}
