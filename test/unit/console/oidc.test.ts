/**
 * The console's OpenID sign-in pieces that need no browser (`console/src/oidc.ts`): the S256 code challenge, the
 * runtime configuration read defensively, and a callback refused before any request when it carries the
 * provider's refusal or answers no sign-in of this tab. The whole flow runs in a browser against a fake provider:
 * test/integration/api-docs-and-console/admin-console-oidc.test.ts.
 */
import { describe, expect, it } from '@jest/globals';
import { finishOidcSignIn, type OidcConfig, parseSignInConfig, pkceChallenge } from '../../../console/src/oidc';

const OIDC: OidcConfig = { signIn: 'oidc', issuer: 'https://login.example/', clientId: 'console', scopes: 'openid', redirectPath: '/admin/callback' };

/** sessionStorage's interface over a Map. */
function memoryStorage(entries: Record<string, string> = {}): Storage {
  const map = new Map(Object.entries(entries));
  return {
    get length() {
      return map.size;
    },
    clear: () => map.clear(),
    getItem: (key) => map.get(key) ?? null,
    key: (index) => [...map.keys()][index] ?? null,
    removeItem: (key) => void map.delete(key),
    setItem: (key, value) => void map.set(key, value),
  };
}

describe('pkceChallenge', () => {
  it('is base64url(SHA-256(verifier)), as RFC 7636 appendix B works it out', async () => {
    expect(await pkceChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });
});

describe('parseSignInConfig', () => {
  it('takes a complete OpenID configuration', () => {
    expect(parseSignInConfig({ ...OIDC })).toEqual(OIDC);
  });

  it('falls back to token sign-in on anything else: missing, unknown or incomplete', () => {
    const configs = [undefined, null, 'oidc', { signIn: 'token' }, { signIn: 'saml' }, { ...OIDC, clientId: '' }, { ...OIDC, issuer: 'not a url' }, { ...OIDC, redirectPath: undefined }];
    expect(configs.map(parseSignInConfig)).toEqual(configs.map(() => ({ signIn: 'token' })));
  });
});

describe('finishOidcSignIn', () => {
  const callback = (query: string) => new URL(`https://console.example/admin/callback?${query}`);
  const PENDING = { state: 'kept', nonce: 'n0nce', verifier: 'v', tokenEndpoint: 'https://login.example/token', redirectUri: 'https://console.example/admin/callback', returnTo: '/admin/' };
  const started = () => memoryStorage({ 'admin-console.oidc-pending': JSON.stringify(PENDING) });

  /** An unsigned JWT with these claims (the console reads the ID token's claims; the API verifies what it is sent). */
  const jwt = (claims: Record<string, unknown>) => ['{"alg":"RS256"}', JSON.stringify(claims), 'sig'].map((part) => Buffer.from(part).toString('base64url')).join('.');
  const goodClaims = () => ({ iss: OIDC.issuer, aud: OIDC.clientId, exp: Math.floor(Date.now() / 1000) + 300, nonce: 'n0nce' });

  /** Completes a sign-in whose token endpoint answers an access token and an ID token with `claims`. */
  async function finishWith(claims: Record<string, unknown>): Promise<string> {
    const realFetch = globalThis.fetch;
    globalThis.fetch = async () => new Response(JSON.stringify({ access_token: 'at', token_type: 'Bearer', id_token: jwt(claims) }), { headers: { 'content-type': 'application/json' } });
    try {
      return (await finishOidcSignIn(OIDC, callback('code=c&state=kept'), started())).accessToken;
    } finally {
      globalThis.fetch = realFetch;
    }
  }

  it('reports the provider’s refusal in its own words, once the state is this sign-in’s', async () => {
    await expect(finishOidcSignIn(OIDC, callback('error=access_denied&error_description=Not+an+admin&state=kept'), started())).rejects.toThrow(
      'The sign-in provider refused the sign-in: Not an admin.',
    );
  });

  it('shows no text from a link whose state is not this sign-in’s', async () => {
    const refusal = finishOidcSignIn(OIDC, callback('error=x&error_description=Call+this+number&state=forged'), started());
    await expect(refusal).rejects.toThrow('state mismatch');
    await expect(refusal).rejects.not.toThrow('Call this number');
  });

  it('refuses a callback when this tab started no sign-in, or already completed it', async () => {
    await expect(finishOidcSignIn(OIDC, callback('code=c&state=s'), memoryStorage())).rejects.toThrow('No sign-in was started in this tab');
  });

  it('refuses a state other than the one kept, and keeps the kept sign-in for the real answer', async () => {
    const storage = started();

    await expect(finishOidcSignIn(OIDC, callback('code=c&state=other'), storage)).rejects.toThrow('state mismatch');
    expect(storage.getItem('admin-console.oidc-pending')).toBe(JSON.stringify(PENDING));
  });

  it('takes the access token when the ID token is from the issuer, for this client, unexpired and answers this sign-in', async () => {
    await expect(finishWith(goodClaims())).resolves.toBe('at');
    await expect(finishWith({ ...goodClaims(), aud: ['api', OIDC.clientId] })).resolves.toBe('at');
  });

  it('refuses an ID token of another issuer, another client, expired, without expiry or of another sign-in', async () => {
    await expect(finishWith({ ...goodClaims(), iss: 'https://evil.example/' })).rejects.toThrow('another issuer');
    await expect(finishWith({ ...goodClaims(), aud: 'someone-else' })).rejects.toThrow('not for this console');
    await expect(finishWith({ ...goodClaims(), exp: Math.floor(Date.now() / 1000) - 1 })).rejects.toThrow('expired');
    await expect(finishWith({ ...goodClaims(), exp: undefined })).rejects.toThrow('expired');
    await expect(finishWith({ ...goodClaims(), nonce: 'other' })).rejects.toThrow('nonce mismatch');
  });
});
