/**
 * The checkout page (`public/`): the buyer's side of the spec's frontend rules, served by the partner backend so
 * that it calls only its own origin and the processor. The page loads the processor's browser library
 * (`processorJsUrl`: Stripe.js at `https://js.stripe.com/v3/`; locally the sandbox processor's stand-in at
 * `http://127.0.0.1:12111/v3/`), and is held to a Content-Security-Policy that allows scripts, requests and frames
 * from this origin and the processor's only.
 */
import { readFileSync } from 'node:fs';

export interface CheckoutPageOptions {
  /** The processor's browser library. */
  processorJsUrl: string;
  /**
   * Origins the processor's library loads from, calls and frames (the page's CSP). Default: Stripe's own
   * ({@link STRIPE_ORIGINS}) for Stripe.js, else the library's own origin (the sandbox's stand-in calls only it).
   */
  processorOrigins?: readonly string[];
}

/** What Stripe.js loads, calls and frames (Stripe's CSP guidance for Stripe.js and the Payment Element). */
export const STRIPE_ORIGINS: readonly string[] = ['https://js.stripe.com', 'https://*.js.stripe.com', 'https://api.stripe.com', 'https://hooks.stripe.com'];

/** The page's CSP origins for the processor library at `jsUrl`, unless given. */
export function processorOriginsFor(jsUrl: URL, given?: readonly string[]): readonly string[] {
  if (given !== undefined && given.length > 0) return given;
  return jsUrl.origin === 'https://js.stripe.com' ? STRIPE_ORIGINS : [jsUrl.origin];
}

interface PageFile {
  content: string;
  headers: Record<string, string>;
}

const PUBLIC = new URL('../public/', import.meta.url);

const escapeAttribute = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export class CheckoutPage {
  private readonly files: ReadonlyMap<string, PageFile>;

  constructor(options: CheckoutPageOptions) {
    const jsUrl = new URL(options.processorJsUrl);
    if (jsUrl.protocol !== 'https:' && jsUrl.protocol !== 'http:') throw new Error(`processorJsUrl must be an http(s) URL: ${options.processorJsUrl}`);
    const origins = processorOriginsFor(jsUrl, options.processorOrigins).join(' ');
    const policy = [
      "default-src 'none'",
      `script-src 'self' ${origins}`,
      `connect-src 'self' ${origins}`,
      `frame-src ${origins}`,
      "style-src 'self'",
      "img-src 'self' data:",
      "frame-ancestors 'none'",
      "base-uri 'none'",
      "form-action 'self'",
    ].join('; ');
    const read = (name: string) => readFileSync(new URL(name, PUBLIC), 'utf8');
    const file = (content: string, type: string, extra: Record<string, string> = {}): PageFile => ({
      content,
      headers: { 'content-type': type, 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff', ...extra },
    });
    this.files = new Map([
      [
        '/checkout',
        file(read('checkout.html').replace('%PROCESSOR_JS_URL%', () => escapeAttribute(jsUrl.href)), 'text/html; charset=utf-8', {
          'content-security-policy': policy,
          'referrer-policy': 'no-referrer',
        }),
      ],
      ['/checkout.js', file(read('checkout.js'), 'text/javascript; charset=utf-8')],
      ['/checkout.css', file(read('checkout.css'), 'text/css; charset=utf-8')],
    ]);
  }

  /** The page or one of its files, by path; `undefined` for any other path. */
  file(pathname: string): PageFile | undefined {
    return this.files.get(pathname);
  }
}
