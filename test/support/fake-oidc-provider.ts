/**
 * A tiny OpenID provider for the console's sign-in tests, on 127.0.0.1: discovery, an authorization endpoint that
 * signs the admin in at once (redirecting back with a code), a token endpoint for public clients with PKCE (S256
 * only), and the JWKS the admin API verifies its access tokens with. Tokens are RS256 JWTs signed with jose: the
 * access token for the admin API (`aud` = the API's audience, `role: "admin"`), the ID token for the client (its
 * `nonce` the one the authorization request carried).
 *
 * It refuses what a real provider refuses (an unknown client or redirect URI, a missing or plain code challenge, a
 * code used twice, a verifier that does not match), and can be told to misbehave once (`tamper`) so a test can
 * watch the console refuse a forged `state` or a foreign `nonce`.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';

export interface FakeOidcProvider {
  /** `http://127.0.0.1:<port>`, the `iss` of every token. */
  issuer: string;
  /** Redirect URIs the client may use (add the console's once its address is known). */
  redirectUris: Set<string>;
  /** The query of every authorization request, in order. */
  authorizations: URLSearchParams[];
  /** The form of every token request, in order. */
  tokenRequests: URLSearchParams[];
  /** Every access token issued, in order. */
  accessTokens: string[];
  /** The next authorization answers with this `state` instead of the client's; the next ID token carries this `nonce`. */
  tamper: { state?: string; nonce?: string };
  close(): Promise<void>;
}

interface Grant {
  clientId: string;
  redirectUri: string;
  challenge: string;
  nonce: string | null;
  scope: string;
}

const KEY_ID = 'fake-oidc-key';

export async function startFakeOidcProvider(options: { clientId: string; apiAudience: string; subject?: string }): Promise<FakeOidcProvider> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: KEY_ID, alg: 'RS256', use: 'sig' };
  const grants = new Map<string, Grant>();
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => send(res, 500, { error: 'server_error', error_description: String(error) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider: FakeOidcProvider = {
    issuer,
    redirectUris: new Set(),
    authorizations: [],
    tokenRequests: [],
    accessTokens: [],
    tamper: {},
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  const sign = (claims: Record<string, unknown>, audience: string) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: KEY_ID, typ: 'JWT' })
      .setIssuer(issuer)
      .setAudience(audience)
      .setSubject(options.subject ?? 'admin@example.test')
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(privateKey);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', issuer);
    if (req.method === 'GET' && url.pathname === '/.well-known/openid-configuration') {
      return send(res, 200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
      });
    }
    if (req.method === 'GET' && url.pathname === '/jwks') return send(res, 200, { keys: [jwk] });
    if (req.method === 'GET' && url.pathname === '/authorize') return authorize(url.searchParams, res);
    if (req.method === 'POST' && url.pathname === '/token') return token(new URLSearchParams(await readText(req)), res);
    return send(res, 404, { error: 'not_found' });
  }

  /** Signs the admin in at once: back to the redirect URI with a code (or, for a bad request, an error page). */
  function authorize(query: URLSearchParams, res: ServerResponse): void {
    provider.authorizations.push(query);
    const redirectUri = query.get('redirect_uri') ?? '';
    const challenge = query.get('code_challenge');
    // An unknown client or redirect URI is never redirected to (RFC 6749 §4.1.2.1).
    if (query.get('client_id') !== options.clientId || !provider.redirectUris.has(redirectUri)) return send(res, 400, { error: 'invalid_request' });
    const back = new URL(redirectUri);
    const state = provider.tamper.state ?? query.get('state');
    delete provider.tamper.state;
    if (state !== null) back.searchParams.set('state', state);
    if (query.get('response_type') !== 'code' || challenge === null || query.get('code_challenge_method') !== 'S256') {
      back.searchParams.set('error', 'invalid_request');
      back.searchParams.set('error_description', 'PKCE with S256 is required');
    } else {
      const code = randomUUID();
      grants.set(code, { clientId: options.clientId, redirectUri, challenge, nonce: query.get('nonce'), scope: query.get('scope') ?? '' });
      back.searchParams.set('code', code);
    }
    res.writeHead(302, { location: back.toString() }).end();
  }

  /** The authorization code grant for a public client: the code once, with the verifier of its challenge. */
  async function token(form: URLSearchParams, res: ServerResponse): Promise<void> {
    provider.tokenRequests.push(form);
    const code = form.get('code') ?? '';
    const grant = grants.get(code);
    grants.delete(code);
    const verifier = form.get('code_verifier') ?? '';
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    if (
      form.get('grant_type') !== 'authorization_code' ||
      grant === undefined ||
      form.get('client_id') !== grant.clientId ||
      form.get('redirect_uri') !== grant.redirectUri ||
      challenge !== grant.challenge
    ) {
      return send(res, 400, { error: 'invalid_grant', error_description: 'The code, client, redirect URI or verifier does not match' });
    }
    const accessToken = await sign({ role: 'admin', scope: grant.scope, client_id: grant.clientId }, options.apiAudience);
    const nonce = provider.tamper.nonce ?? grant.nonce;
    delete provider.tamper.nonce;
    const idToken = await sign(nonce === null ? {} : { nonce }, grant.clientId);
    provider.accessTokens.push(accessToken);
    send(res, 200, { access_token: accessToken, id_token: idToken, token_type: 'Bearer', expires_in: 3600, scope: grant.scope });
  }

  return provider;
}

/** JSON, readable from any origin (the console calls discovery and the token endpoint from its page), never cached. */
function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', 'access-control-allow-origin': '*' }).end(JSON.stringify(body));
}

const readText = async (req: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};
