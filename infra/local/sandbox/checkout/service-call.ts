/**
 * One call of the service's HTTP API by the sandbox checkout, retried as a partner's client retries it
 * (examples/partner-backend's `ServiceClient`, which the runtime may not import): when the service says the same
 * request may be sent again later (409 IDEMPOTENCY_KEY_IN_USE, 429, 502, 503) or gives no answer at all, the same
 * request (headers, idempotency key, the very bytes signed) is sent again after the `Retry-After` it asks for,
 * else after 250 ms doubling, never waiting longer than {@link MAX_DELAY_MS} (a buyer is waiting), at most
 * {@link MAX_ATTEMPTS} times in all. Any other answer, or the last one, is the caller's to judge.
 */

/** Tries per call, the first included: the example's client's default. */
const MAX_ATTEMPTS = 4;
/** The longest wait before a retry, whatever `Retry-After` asks. */
const MAX_DELAY_MS = 5_000;
/** Per try: the service cuts a request off before its 29 s function timeout. */
const TIMEOUT_MS = 30_000;

export interface ServiceRequest {
  method: 'GET' | 'POST' | 'DELETE';
  /** The full URL. */
  url: string;
  headers: Record<string, string>;
  /** The exact bytes to send (and, for a signed call, signed). */
  body?: string;
}

export interface ServiceAnswer {
  status: number;
  /** The service's error `code`, when the body is its error JSON. */
  code: string | undefined;
  text: string;
}

/** `POST /admin/partners`: the call as the API reference names it. */
const nameOf = (request: ServiceRequest) => `${request.method} ${new URL(request.url).pathname.replace(/^\/api\/v1(?=\/)/, '')}`;

/** A failed call in a message that names it: `POST /admin/partners answered 503: {...}`. */
export const describeAnswer = (request: ServiceRequest, answer: ServiceAnswer) => `${nameOf(request)} answered ${answer.status}: ${answer.text.slice(0, 300)}`;

/** Service answers that mean "send the same request again later"; any other would only repeat. */
const mayRetry = (answer: ServiceAnswer) => answer.status === 429 || answer.status === 502 || answer.status === 503 || (answer.status === 409 && answer.code === 'IDEMPOTENCY_KEY_IN_USE');

/** The service's answer to `request`, tried again while it says so (see the module's comment). */
export async function callService(request: ServiceRequest): Promise<ServiceAnswer> {
  for (let attempt = 1; ; attempt++) {
    let response: Response;
    try {
      response = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body, signal: AbortSignal.timeout(TIMEOUT_MS) });
    } catch (noAnswer) {
      // Refused, reset or timed out: whether it ran is unknown; sent again, as the example's client sends it.
      if (attempt >= MAX_ATTEMPTS) throw new Error(`${nameOf(request)} had no answer`, { cause: noAnswer });
      await pause(request, attempt, (noAnswer as Error).name, undefined);
      continue;
    }
    const text = await response.text();
    const answer: ServiceAnswer = { status: response.status, code: codeOf(text), text };
    if (!mayRetry(answer) || attempt >= MAX_ATTEMPTS) return answer;
    await pause(request, attempt, `${answer.status} ${answer.code ?? ''}`.trim(), retryAfterMs(response.headers.get('retry-after')));
  }
}

async function pause(request: ServiceRequest, attempt: number, why: string, retryAfter: number | undefined): Promise<void> {
  const delayMs = Math.min(retryAfter ?? 250 * 2 ** (attempt - 1), MAX_DELAY_MS);
  console.warn(`[sandbox-checkout] ${nameOf(request)}: ${why}, try ${attempt + 1} in ${delayMs} ms`);
  await new Promise((resolve) => setTimeout(resolve, delayMs));
}

/** `Retry-After` in milliseconds: delay-seconds or an HTTP date (RFC 9110 §10.2.3); `undefined` when absent or unreadable. */
function retryAfterMs(value: string | null): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(at - Date.now(), 0);
}

function codeOf(text: string): string | undefined {
  try {
    const { code } = JSON.parse(text) as { code?: unknown };
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}
