/**
 * Sign-in through the admins' OpenID provider, when `/admin/config.json` says `"signIn": "oidc"` (the console
 * stack writes it in AWS; locally it says `token`): the Authorization Code flow with PKCE (RFC 7636, S256) as a
 * public client, the code exchanged from the browser at the provider's token endpoint (no client secret).
 *
 * 1. `startOidcSignIn`: reads the provider's discovery document (`<issuer>/.well-known/openid-configuration`),
 *    keeps a fresh `state`, `nonce` and code verifier in this tab (sessionStorage), and returns the authorization
 *    URL to send the browser to.
 * 2. The provider sends the browser back to `redirectPath` (`/admin/callback`) with `code` and `state`.
 * 3. `finishOidcSignIn`: takes the kept values (once: a second use of the same callback fails), checks `state`,
 *    exchanges the code with the verifier, and checks the ID token's `iss`, `aud`, `exp` and `nonce`. The ID token
 *    comes straight from the token endpoint over TLS, so its signature is not checked here (OpenID Connect Core
 *    3.1.3.7); the admin API checks the signature of what it is sent.
 *
 * The console keeps the **access token** as its bearer token: the admin API wants a token for its own audience
 * (`adminJwtAudience`) with `role: "admin"`, which is what an access token for that API is, whereas an ID token is
 * for the console (its audience is the client id). The provider must issue it as an RS256 JWT (docs/deploy.md).
 *
 * No DOM globals at module level, and storage is passed in, so the flow can be tested outside a browser.
 */
import type { ConsoleRuntimeConfig } from '../../infra/shared/console-site';

export type SignInConfig = ConsoleRuntimeConfig;
export type OidcConfig = Extract<ConsoleRuntimeConfig, { signIn: 'oidc' }>;

/** A sign-in that could not be completed, with what to tell the admin. */
export class OidcError extends Error {}

/** The sign-in under way in this tab, between the redirect to the provider and the callback. */
interface PendingSignIn {
  state: string;
  nonce: string;
  verifier: string;
  tokenEndpoint: string;
  redirectUri: string;
  returnTo: string;
}

const PENDING_KEY = 'admin-console.oidc-pending';

const TOKEN_SIGN_IN: SignInConfig = { signIn: 'token' };

const isText = (value: unknown): value is string => typeof value === 'string' && value.trim() !== '';

/** The configuration as the file says it; anything incomplete or unknown is token sign-in, which always works. */
export function parseSignInConfig(value: unknown): SignInConfig {
  if (typeof value !== 'object' || value === null) return TOKEN_SIGN_IN;
  const config = value as Record<string, unknown>;
  if (config.signIn !== 'oidc') return TOKEN_SIGN_IN;
  const { issuer, clientId, scopes, redirectPath } = config;
  if (!isText(issuer) || !isText(clientId) || !isText(scopes) || !isText(redirectPath) || !URL.canParse(issuer)) return TOKEN_SIGN_IN;
  return { signIn: 'oidc', issuer, clientId, scopes, redirectPath };
}

/** Reads the runtime configuration at `url`; unreadable (an old deployment without it), token sign-in. */
export async function loadSignInConfig(url: string): Promise<SignInConfig> {
  try {
    const response = await fetch(url);
    return response.ok ? parseSignInConfig(await response.json()) : TOKEN_SIGN_IN;
  } catch {
    return TOKEN_SIGN_IN;
  }
}

const base64Url = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

/** 32 random bytes, base64url: 43 characters, as RFC 7636 asks of a code verifier (and enough for state and nonce). */
const randomValue = () => base64Url(crypto.getRandomValues(new Uint8Array(32)));

/** The S256 code challenge of `verifier`: base64url(SHA-256(verifier)), RFC 7636 §4.2. */
export async function pkceChallenge(verifier: string): Promise<string> {
  return base64Url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
}

interface ProviderMetadata {
  authorizationEndpoint: string;
  tokenEndpoint: string;
}

/** The provider's endpoints, from its discovery document, whose `issuer` must be the configured one exactly. */
async function discover(issuer: string): Promise<ProviderMetadata> {
  const url = `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
  let document: Record<string, unknown>;
  try {
    const response = await fetch(url, { headers: { accept: 'application/json' } });
    if (!response.ok) throw new Error(`it answered ${response.status}`);
    document = (await response.json()) as Record<string, unknown>;
  } catch (error) {
    throw new OidcError(`The sign-in provider could not be reached (${url}: ${error instanceof Error ? error.message : String(error)}).`);
  }
  const { authorization_endpoint: authorizationEndpoint, token_endpoint: tokenEndpoint } = document;
  if (document.issuer !== issuer) throw new OidcError(`The sign-in provider's discovery document names another issuer (${String(document.issuer)}, expected ${issuer}).`);
  if (!isText(authorizationEndpoint) || !URL.canParse(authorizationEndpoint) || !isText(tokenEndpoint) || !URL.canParse(tokenEndpoint)) {
    throw new OidcError('The sign-in provider’s discovery document has no authorization or token endpoint.');
  }
  return { authorizationEndpoint, tokenEndpoint };
}

/**
 * Prepares a sign-in and returns the provider's authorization URL to send the browser to. `origin` is the
 * console's (the redirect URI is `origin` + `redirectPath`); after signing in, the browser returns to `returnTo`.
 */
export async function startOidcSignIn(config: OidcConfig, options: { origin: string; returnTo: string; storage: Storage }): Promise<string> {
  const provider = await discover(config.issuer);
  const pending: PendingSignIn = {
    state: randomValue(),
    nonce: randomValue(),
    verifier: randomValue(),
    tokenEndpoint: provider.tokenEndpoint,
    redirectUri: `${options.origin}${config.redirectPath}`,
    returnTo: options.returnTo,
  };
  options.storage.setItem(PENDING_KEY, JSON.stringify(pending));
  const url = new URL(provider.authorizationEndpoint);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', config.clientId);
  url.searchParams.set('redirect_uri', pending.redirectUri);
  url.searchParams.set('scope', config.scopes);
  url.searchParams.set('state', pending.state);
  url.searchParams.set('nonce', pending.nonce);
  url.searchParams.set('code_challenge', await pkceChallenge(pending.verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  return url.toString();
}

/** The kept sign-in, removed as it is read: a callback can be used once. */
/**
 * The sign-in started in this tab, if `state` is its state; it is then used up (a callback works once). A callback
 * with another state (a forged or stale link) leaves it in place, so the real answer can still complete it.
 */
function takePending(storage: Storage, state: string | null): PendingSignIn | undefined {
  const pending = readPending(storage);
  if (pending === undefined || state === null || pending.state !== state) return undefined;
  storage.removeItem(PENDING_KEY);
  return pending;
}

function readPending(storage: Storage): PendingSignIn | undefined {
  const text = storage.getItem(PENDING_KEY);
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as PendingSignIn;
  } catch {
    return undefined;
  }
}

/** A JWT's claims, unverified (see the module's comment). */
function jwtClaims(token: string): Record<string, unknown> {
  const payload = token.split('.')[1];
  if (payload === undefined) throw new OidcError('The sign-in provider’s ID token is not a JWT.');
  try {
    const binary = atob(payload.replace(/-/g, '+').replace(/_/g, '/'));
    return JSON.parse(new TextDecoder().decode(Uint8Array.from(binary, (char) => char.charCodeAt(0)))) as Record<string, unknown>;
  } catch {
    throw new OidcError('The sign-in provider’s ID token could not be read.');
  }
}

/** The ID token is for this console, from this provider, unexpired, and answers this sign-in (its nonce). */
function checkIdToken(idToken: unknown, config: OidcConfig, nonce: string): void {
  if (!isText(idToken)) throw new OidcError('The sign-in provider sent no ID token (are the scopes missing openid?).');
  const claims = jwtClaims(idToken);
  const audiences = [claims.aud].flat();
  if (claims.iss !== config.issuer) throw new OidcError(`The ID token is from another issuer (${String(claims.iss)}).`);
  if (!audiences.includes(config.clientId)) throw new OidcError('The ID token is not for this console (its audience is another client).');
  if (typeof claims.exp !== 'number' || claims.exp * 1000 <= Date.now()) throw new OidcError('The ID token has expired: sign in again.');
  if (claims.nonce !== nonce) throw new OidcError('The ID token does not answer this sign-in (nonce mismatch): sign in again.');
}

/**
 * Completes the sign-in the provider sent the browser back from (`callbackUrl`, the redirect URI with its
 * query): returns the access token to use as the admin bearer token, and where to go next.
 */
export async function finishOidcSignIn(config: OidcConfig, callbackUrl: URL, storage: Storage): Promise<{ accessToken: string; returnTo: string }> {
  const params = callbackUrl.searchParams;
  // The state first: until it matches the sign-in started here, nothing in the link (an error text included) is
  // the provider's word, and it is not shown.
  const pending = takePending(storage, params.get('state'));
  if (pending === undefined) {
    if (readPending(storage) === undefined) throw new OidcError('No sign-in was started in this tab, or it was already completed: sign in again.');
    throw new OidcError('The sign-in answer does not match the sign-in started here (state mismatch): sign in again.');
  }
  const refusal = params.get('error');
  if (refusal !== null) throw new OidcError(`The sign-in provider refused the sign-in: ${params.get('error_description') ?? refusal}.`);
  const code = params.get('code');
  if (code === null || code === '') throw new OidcError('The sign-in provider sent no authorization code.');

  let response: Response;
  try {
    response = await fetch(pending.tokenEndpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: pending.redirectUri, client_id: config.clientId, code_verifier: pending.verifier }),
    });
  } catch (error) {
    throw new OidcError(`The sign-in provider’s token endpoint could not be reached (${error instanceof Error ? error.message : String(error)}).`);
  }
  const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (!response.ok) throw new OidcError(`The sign-in provider refused the code: ${String(body.error_description ?? body.error ?? `it answered ${response.status}`)}.`);
  if (!isText(body.access_token) || String(body.token_type).toLowerCase() !== 'bearer') throw new OidcError('The sign-in provider sent no bearer access token.');
  checkIdToken(body.id_token, config, pending.nonce);
  return { accessToken: body.access_token, returnTo: pending.returnTo };
}
