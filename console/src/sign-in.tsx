/**
 * The sign-in screen, as the runtime configuration (`/admin/config.json`) says: `token`, an admin token pasted in
 * (`npm run admin-token` prints one locally) and checked with one small admin call; `oidc`, a "Sign in with
 * <provider>" button (`oidc.ts`), the token paste kept below it as a fallback. At the provider's callback path it
 * completes that sign-in instead, then returns to the page the admin started from.
 */
import { type FormEvent, type ReactNode, useEffect, useState } from 'react';
import { ApiError, createAdminApi } from './api';
import { ErrorNotice } from './feedback';
import { finishOidcSignIn, loadSignInConfig, type OidcConfig, type SignInConfig, startOidcSignIn } from './oidc';
import { useAction } from './use-call';

const CONFIG_URL = `${import.meta.env.BASE_URL}config.json`;

/** Read once per page load, from the first render on. */
let config: Promise<SignInConfig> | undefined;
const signInConfig = () => (config ??= loadSignInConfig(CONFIG_URL));

/** The callback's completion, once per page load (a second run would find its sign-in already taken). */
let completion: Promise<string> | undefined;

const signInError = (error: unknown) => new ApiError(0, 'SIGN_IN_FAILED', error instanceof Error ? error.message : String(error));

export function SignIn({ reason, onSignedIn }: { reason: string | undefined; onSignedIn: (token: string) => void }) {
  const [loaded, setLoaded] = useState<SignInConfig | undefined>();
  // Where the page opened: the callback screen stays up after it takes the code out of the address bar.
  const [openedAt] = useState(() => window.location.pathname);
  useEffect(() => {
    let current = true;
    void signInConfig().then((value) => current && setLoaded(value));
    return () => {
      current = false;
    };
  }, []);
  if (loaded === undefined) return <Screen reason={undefined} status="Loading sign-in…" />;
  if (loaded.signIn === 'oidc' && openedAt === loaded.redirectPath) {
    return <Callback config={loaded} onSignedIn={onSignedIn} />;
  }
  if (loaded.signIn === 'token') {
    return (
      <Screen reason={reason}>
        <TokenForm onSignedIn={onSignedIn} />
      </Screen>
    );
  }
  return (
    <Screen reason={reason}>
      <ProviderSignIn config={loaded} />
      <details className="token-fallback">
        <summary>Sign in with an admin token instead</summary>
        <TokenForm onSignedIn={onSignedIn} />
      </details>
    </Screen>
  );
}

/** The screen's frame. The reason (why the admin was signed out) shows with the ways to sign in, never before them. */
function Screen({ reason, status, children }: { reason: string | undefined; status?: string; children?: ReactNode }) {
  return (
    <main className="sign-in">
      <h1>Admin console</h1>
      {status !== undefined && (
        <p className="loading" role="status">
          {status}
        </p>
      )}
      {reason !== undefined && (
        <p className="error" role="alert">
          {reason}
        </p>
      )}
      {children}
    </main>
  );
}

/** Sends the browser to the provider, to come back to the page it is on now. */
function ProviderSignIn({ config }: { config: OidcConfig }) {
  const start = useAction();
  const host = new URL(config.issuer).host;
  const signIn = () =>
    start.run(async () => {
      try {
        const returnTo = `${window.location.pathname}${window.location.search}`;
        window.location.assign(await startOidcSignIn(config, { origin: window.location.origin, returnTo, storage: sessionStorage }));
      } catch (error) {
        throw signInError(error);
      }
    });
  return (
    <div className="provider-sign-in">
      <button type="button" onClick={() => void signIn()} disabled={start.pending}>
        Sign in with {host}
      </button>
      <ErrorNotice error={start.error} />
    </div>
  );
}

/** At the redirect path: completes the sign-in, or says why not and offers to start again. */
function Callback({ config, onSignedIn }: { config: OidcConfig; onSignedIn: (token: string) => void }) {
  const [error, setError] = useState<ApiError | undefined>();
  useEffect(() => {
    completion ??= finishOidcSignIn(config, new URL(window.location.href), sessionStorage).then(({ accessToken, returnTo }) => {
      // The code and state leave the address bar and the history; the app opens where the admin started.
      window.history.replaceState(null, '', returnTo.startsWith(import.meta.env.BASE_URL) ? returnTo : import.meta.env.BASE_URL);
      return accessToken;
    });
    completion.then(onSignedIn, (caught: unknown) => {
      window.history.replaceState(null, '', import.meta.env.BASE_URL);
      setError(signInError(caught));
    });
  }, []);
  if (error === undefined) return <Screen reason={undefined} status="Signing in…" />;
  return (
    <Screen reason={undefined}>
      <ErrorNotice error={error} />
      <ProviderSignIn config={config} />
    </Screen>
  );
}

function TokenForm({ onSignedIn }: { onSignedIn: (token: string) => void }) {
  const [token, setToken] = useState('');
  const check = useAction();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const trimmed = token.trim();
    const page = await check.run(() => createAdminApi(trimmed, () => undefined).listPartners(undefined, 1));
    if (page !== undefined) onSignedIn(trimmed);
  };
  return (
    <form onSubmit={submit}>
      <label>
        Admin token
        <textarea value={token} onChange={(event) => setToken(event.target.value)} rows={4} required spellCheck={false} autoComplete="off" />
      </label>
      <p className="hint">
        Locally, <code>npm run admin-token</code> prints one. It is kept in this tab only (sessionStorage).
      </p>
      <button type="submit" disabled={check.pending}>
        {check.pending ? 'Checking…' : 'Sign in'}
      </button>
      <ErrorNotice error={check.error} />
    </form>
  );
}
