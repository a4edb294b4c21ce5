/**
 * The processor sandbox for browsers, as Stripe serves them: CORS on the API (`/v1/*`: any origin, no
 * credentials, no `Authorization` header, so a browser can use only the publishable key, sent as `key=`; a
 * preflight answered without authentication) and the Stripe.js stand-in at `/v3` (as
 * js.stripe.com/v3/), the plain script `stripe-js/stripe.js`, read once when the sandbox starts.
 */
import { readFile } from 'node:fs/promises';
import type { OutgoingHttpHeaders } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const STRIPE_JS_PATHS: readonly string[] = ['/v3', '/v3/', '/v3/stripe.js'];
/** How long a browser may reuse a preflight's answer, in seconds. */
const PREFLIGHT_MAX_AGE_S = 600;

interface BrowserAnswer {
  status: number;
  headers: OutgoingHttpHeaders;
  body: Buffer;
}

/** The Stripe.js stand-in's source, as served. */
export function loadStripeJs(): Promise<Buffer> {
  // This module's directory: from `import.meta.url` as an ES module, `__dirname` where it is loaded as CommonJS
  // (jest's globalSetup starts a sandbox so).
  const here = import.meta.url === undefined ? __dirname : dirname(fileURLToPath(import.meta.url));
  return readFile(join(here, 'stripe-js', 'stripe.js'));
}

/** The CORS headers every answer under `/v1` carries, as Stripe's API answers browsers. */
export function corsHeaders(url: string | undefined): OutgoingHttpHeaders {
  return isApiUrl(url ?? '') ? { 'access-control-allow-origin': '*' } : {};
}

/** The answer to a CORS preflight of the API or to a request for the stand-in; undefined for any other request. */
export function browserAnswer(method: string, url: string | undefined, stripeJs: Buffer): BrowserAnswer | undefined {
  const target = url ?? '/';
  if (method === 'OPTIONS' && isApiUrl(target)) {
    return {
      status: 204,
      headers: {
        'access-control-allow-origin': '*',
        'access-control-allow-methods': 'GET, POST',
        // Not `authorization`: a browser sends the publishable key as `key=` (Stripe.js does), and a page of another
        // site must never get to send the well-known local secret key (`sk_test_sandbox_local`) from a developer's browser.
        'access-control-allow-headers': 'content-type, idempotency-key, stripe-version',
        'access-control-max-age': String(PREFLIGHT_MAX_AGE_S),
      },
      body: Buffer.alloc(0),
    };
  }
  if (method === 'GET' && STRIPE_JS_PATHS.includes(pathOf(target))) {
    return {
      status: 200,
      headers: {
        'content-type': 'text/javascript; charset=utf-8',
        'content-length': stripeJs.length,
        'cache-control': 'no-cache',
        'x-content-type-options': 'nosniff',
        'access-control-allow-origin': '*',
      },
      body: stripeJs,
    };
  }
  return undefined;
}

function isApiUrl(url: string): boolean {
  const path = pathOf(url);
  return path === '/v1' || path.startsWith('/v1/');
}

function pathOf(url: string): string {
  const queryStart = url.indexOf('?');
  return queryStart === -1 ? url : url.slice(0, queryStart);
}
