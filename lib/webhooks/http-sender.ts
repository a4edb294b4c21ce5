/**
 * Sends one signed webhook request over HTTP(S) (decisions.md §8): a POST of the exact body, answered within
 * the timeout (10 s) or cut off. Redirects are never followed (a 3xx is an answer, and a failure); of the
 * response only the status is used: its body is not read (the socket is closed as soon as the status line and
 * headers are in), so a partner's server cannot make the service download anything.
 *
 * The URL is checked again here, at delivery time, against the same rules as at creation: its host is resolved
 * once by {@link pinnedLookup}, every address must be public, and the connection goes to an address so checked.
 */
import http from 'node:http';
import https from 'node:https';
import type { SendResult, WebhookSender } from '../use-cases/ports/webhook-sender';
import { checkUrlShape, pinnedLookup, type Resolver, systemResolver, UnsafeWebhookUrlError, type UrlPolicy } from './url-safety';

/** A partner must answer within this (decisions.md §8: a 2xx within 10 s is success). */
export const WEBHOOK_TIMEOUT_MS = 10_000;

const USER_AGENT = 'partner-payments-webhooks/1';

class AttemptTimeout extends Error {
  override readonly name = 'AttemptTimeout';
}

/** Why an attempt got no answer, for `last_error`: fixed texts and error codes, never the URL. */
function describe(error: Error, timeoutMs: number): string {
  if (error instanceof AttemptTimeout) return `No response within ${timeoutMs / 1000} s`;
  if (error instanceof UnsafeWebhookUrlError) return `Refused: ${error.message}`;
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'Connection refused';
    case 'ECONNRESET':
      return 'Connection reset before a response';
    case 'ENOTFOUND':
      return 'The host does not resolve';
    case undefined:
      return 'Connection failed';
    default:
      return code.startsWith('ERR_TLS') || /CERT|SSL|TLS/.test(code) ? `TLS error (${code})` : `Connection failed (${code})`;
  }
}

/**
 * A {@link WebhookSender} for `policy` (`ALLOW_INSECURE_WEBHOOK_URLS`). `timeoutMs` covers everything up to the
 * response's status and headers: connect, TLS, request, the partner's processing. `resolve` is the DNS lookup
 * (tests inject one).
 */
export function createHttpSender(options: { policy: UrlPolicy; timeoutMs?: number; resolve?: Resolver }): WebhookSender {
  const { policy, timeoutMs = WEBHOOK_TIMEOUT_MS, resolve = systemResolver } = options;
  const lookup = pinnedLookup(policy, resolve);
  return (request) =>
    new Promise<SendResult>((settle) => {
      let url: URL;
      try {
        url = checkUrlShape(request.url, policy);
      } catch (error) {
        settle({ error: describe(error as Error, timeoutMs) });
        return;
      }
      const transport = url.protocol === 'https:' ? https : http;
      const outgoing = transport.request(url, {
        method: 'POST',
        headers: { ...request.headers, 'Content-Length': String(Buffer.byteLength(request.body, 'utf8')), 'User-Agent': USER_AGENT },
        // A fresh connection per attempt: no socket (nor its resolved address) is shared between endpoints.
        agent: false,
        lookup: lookup as unknown as http.RequestOptions['lookup'],
      });
      const timer = setTimeout(() => outgoing.destroy(new AttemptTimeout()), timeoutMs);
      outgoing.once('response', (response) => {
        clearTimeout(timer);
        const httpStatus = response.statusCode ?? 0;
        response.destroy();
        outgoing.destroy();
        settle({ httpStatus });
      });
      outgoing.on('error', (error) => {
        clearTimeout(timer);
        settle(error instanceof AttemptTimeout ? { error: describe(error, timeoutMs), timedOut: true } : { error: describe(error, timeoutMs) });
      });
      outgoing.end(request.body);
    });
}
