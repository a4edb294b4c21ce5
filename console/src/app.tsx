/**
 * Signed out: the sign-in screen. Signed in: the sections, each calling the admin API with the token. A 401
 * ADMIN_TOKEN_INVALID from any call (the token expired, or the secret changed) signs out and says why.
 */
import { useMemo, useState } from 'react';
import { type ApiError, createAdminApi } from './api';
import { ApiKeysSection } from './api-keys/api-keys-section';
import { hrefOf, SECTIONS, useRoute } from './navigation';
import { PartnersSection } from './partners/partners-section';
import { BalancesSection } from './settlements/balances-section';
import { SettlementsSection } from './settlements/settlements-section';
import { TransactionsSection } from './transactions/transactions-section';
import { WebhooksSection } from './webhooks/webhooks-section';
import { ApiContext, forgetToken, storedToken, storeToken } from './session';
import { SignIn } from './sign-in';

export function App() {
  const [token, setToken] = useState(storedToken);
  const [signOutReason, setSignOutReason] = useState<string | undefined>();
  const signOut = (reason?: string) => {
    forgetToken();
    setToken(undefined);
    setSignOutReason(reason);
  };
  const api = useMemo(
    () => (token === undefined ? undefined : createAdminApi(token, (error: ApiError) => signOut(`${error.message} (${error.code}): sign in again.`))),
    [token],
  );
  if (api === undefined) {
    return (
      <SignIn
        reason={signOutReason}
        onSignedIn={(newToken) => {
          storeToken(newToken);
          setSignOutReason(undefined);
          setToken(newToken);
        }}
      />
    );
  }
  return (
    <ApiContext.Provider value={api}>
      <Shell onSignOut={() => signOut()} />
    </ApiContext.Provider>
  );
}

function Shell({ onSignOut }: { onSignOut: () => void }) {
  const [route, navigate] = useRoute();
  return (
    <div className="shell">
      <header>
        <h1>Admin console</h1>
        <nav aria-label="Sections">
          {SECTIONS.map((section) => (
            <a
              key={section.id}
              href={hrefOf({ section: section.id })}
              aria-current={route.section === section.id ? 'page' : undefined}
              onClick={(event) => {
                event.preventDefault();
                navigate({ section: section.id });
              }}
            >
              {section.title}
            </a>
          ))}
        </nav>
        <button type="button" className="secondary" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <main>
        {route.section === 'partners' && <PartnersSection onShowKeys={(partnerId) => navigate({ section: 'api-keys', partnerId })} />}
        {route.section === 'api-keys' && <ApiKeysSection partnerId={route.partnerId} onChoosePartner={(partnerId) => navigate({ section: 'api-keys', partnerId })} />}
        {route.section === 'webhooks' && <WebhooksSection partnerId={route.partnerId} onChoosePartner={(partnerId) => navigate({ section: 'webhooks', partnerId })} />}
        {route.section === 'transactions' && <TransactionsSection />}
        {route.section === 'settlements' && <SettlementsSection />}
        {route.section === 'balances' && <BalancesSection partnerId={route.partnerId} onChoosePartner={(partnerId) => navigate({ section: 'balances', partnerId })} />}
      </main>
    </div>
  );
}
