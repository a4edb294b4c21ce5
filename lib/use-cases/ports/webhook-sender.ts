/**
 * One attempt at a partner's webhook endpoint, as the delivery use case sees it: a signed request goes out, an HTTP
 * status (or the reason there is none) comes back. The adapter (`lib/webhooks/http-sender.ts`) sends it over
 * HTTP(S) with the URL re-checked and its addresses pinned; tests and the local runtime's fault drills put their own
 * behind it.
 */
export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * The partner's HTTP status, or why there is none (refused URL, DNS, connection, TLS, timeout); `timedOut` when
 * the partner held the attempt for the whole timeout (what the endpoint's circuit breaker counts).
 */
export type SendResult = { httpStatus: number } | { error: string; timedOut?: boolean };

export type WebhookSender = (request: WebhookRequest) => Promise<SendResult>;
