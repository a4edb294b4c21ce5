/** Takes an admin token (`npm run admin-token` prints one locally) and checks it with one small admin call. */
import { type FormEvent, useState } from 'react';
import { createAdminApi } from './api';
import { ErrorNotice } from './feedback';
import { useAction } from './use-call';

export function SignIn({ reason, onSignedIn }: { reason: string | undefined; onSignedIn: (token: string) => void }) {
  const [token, setToken] = useState('');
  const check = useAction();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const trimmed = token.trim();
    const page = await check.run(() => createAdminApi(trimmed, () => undefined).listPartners(undefined, 1));
    if (page !== undefined) onSignedIn(trimmed);
  };
  return (
    <main className="sign-in">
      <h1>Admin console</h1>
      {reason !== undefined && (
        <p className="error" role="alert">
          {reason}
        </p>
      )}
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
    </main>
  );
}
