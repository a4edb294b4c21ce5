/**
 * What the admin console's site answers with, wherever it is served: locally by `infra/local/runtime/console-assets.ts`,
 * in AWS by the console stack's CloudFront distribution (`infra/aws/console-stack.ts`). Both build the page's
 * headers and the runtime configuration (`/admin/config.json`) from here, so the two cannot drift. Pure data: no
 * CDK, no I/O.
 */

/** The console's runtime configuration file, which the app reads before it shows the sign-in screen. */
export const CONSOLE_CONFIG_PATH = '/admin/config.json';

/** Where the OpenID provider sends the browser back with the authorization code (the app's own page answers it). */
export const CONSOLE_CALLBACK_PATH = '/admin/callback';

/**
 * How the console signs an admin in. `token`: an admin token pasted in (locally, `npm run admin-token` prints one).
 * `oidc`: the Authorization Code flow with PKCE at `issuer`, as the public client `clientId`; the paste stays as a
 * fallback. The console reads this shape from `/admin/config.json` (`console/src/oidc.ts`).
 */
export type ConsoleRuntimeConfig =
  | { signIn: 'token' }
  | { signIn: 'oidc'; issuer: string; clientId: string; scopes: string; redirectPath: string };

/** The OpenID provider the console signs in with (CDK context `consoleOidcIssuer`, `consoleOidcClientId`, `consoleOidcScopes`). */
export interface ConsoleOidcSettings {
  issuer: string;
  clientId: string;
  /** Space-separated; always includes `openid` (the ID token's nonce is checked). */
  scopes: string;
}

/** The runtime configuration for these settings: token sign-in without a provider. */
export const consoleRuntimeConfig = (oidc?: ConsoleOidcSettings): ConsoleRuntimeConfig =>
  oidc === undefined ? { signIn: 'token' } : { signIn: 'oidc', ...oidc, redirectPath: CONSOLE_CALLBACK_PATH };

/**
 * The page's Content-Security-Policy, as strict as the API reference's (`functions/api-docs.ts`): scripts and
 * styles from this origin only, no framing, no `<base>`, no form posted anywhere. Requests go to this origin, plus
 * `connectSources` (the OpenID provider's origin, whose discovery document and token endpoint the console calls).
 */
export function consoleContentSecurityPolicy(options: { connectSources?: readonly string[] } = {}): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: https:",
    ["connect-src 'self'", ...(options.connectSources ?? [])].join(' '),
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

/** The policy with token sign-in (and locally, always). */
export const CONSOLE_CONTENT_SECURITY_POLICY = consoleContentSecurityPolicy();

/**
 * The headers every answer of the console carries besides its Content-Security-Policy. In AWS the response
 * headers policy also sends HSTS, which means nothing over the plain HTTP of `npm start`.
 */
export const CONSOLE_SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
} as const;
