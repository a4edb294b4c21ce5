/**
 * The admin token, kept in sessionStorage (gone when the tab closes), and the API client made from it, which
 * every section takes from context. The token is the one pasted in, or the access token of a sign-in through the
 * OpenID provider (`oidc.ts`); either way the admin API checks it on every call.
 */
import { createContext, useContext } from 'react';
import type { AdminApi } from './api';

const TOKEN_KEY = 'admin-console.token';

export const storedToken = () => sessionStorage.getItem(TOKEN_KEY) ?? undefined;
export const storeToken = (token: string) => sessionStorage.setItem(TOKEN_KEY, token);
export const forgetToken = () => sessionStorage.removeItem(TOKEN_KEY);

export const ApiContext = createContext<AdminApi | undefined>(undefined);

export function useApi(): AdminApi {
  const api = useContext(ApiContext);
  if (api === undefined) throw new Error('useApi outside the signed-in console');
  return api;
}
