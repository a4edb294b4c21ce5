/**
 * The console's OpenID sign-in pieces that need no browser (`console/src/oidc.ts`): the S256 code challenge, the
 * runtime configuration read defensively, and a callback refused before any request when it carries the
 * provider's refusal or answers no sign-in of this tab. The whole flow runs in a browser against a fake provider:
 * test/integration/admin-console-oidc.test.ts.
 */
import { describe, expect, it } from '@jest/globals';
import { finishOidcSignIn, type OidcConfig, parseSignInConfig, pkceChallenge } from '../../console/src/oidc';

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

  it('reports the provider’s refusal in its own words', async () => {
    await expect(finishOidcSignIn(OIDC, callback('error=access_denied&error_description=Not+an+admin&state=s'), memoryStorage())).rejects.toThrow(
      'The sign-in provider refused the sign-in: Not an admin.',
    );
  });

  it('refuses a callback when this tab started no sign-in, or already completed it', async () => {
    await expect(finishOidcSignIn(OIDC, callback('code=c&state=s'), memoryStorage())).rejects.toThrow('No sign-in was started in this tab');
  });

  it('refuses a state other than the one kept, and forgets the kept sign-in either way', async () => {
    const pending = { state: 'kept', nonce: 'n', verifier: 'v', tokenEndpoint: 'https://login.example/token', redirectUri: 'https://console.example/admin/callback', returnTo: '/admin/' };
    const storage = memoryStorage({ 'admin-console.oidc-pending': JSON.stringify(pending) });

    await expect(finishOidcSignIn(OIDC, callback('code=c&state=other'), storage)).rejects.toThrow('state mismatch');
    expect(storage.length).toBe(0);
  });
});
