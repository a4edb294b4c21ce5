/**
 * The console's own routes, under `/admin/` (the service answers any of them with the app's page):
 * `/admin/<section>`, and `?partner_id=…` for a partner's API keys, webhooks or balances. History entries, so Back works.
 */
import { useCallback, useEffect, useState } from 'react';

export const SECTIONS = [
  { id: 'partners', title: 'Partners' },
  { id: 'api-keys', title: 'API keys' },
  { id: 'webhooks', title: 'Webhooks' },
  { id: 'transactions', title: 'Transactions' },
  { id: 'settlements', title: 'Settlements' },
  { id: 'balances', title: 'Balances' },
] as const;

export type Section = (typeof SECTIONS)[number]['id'];

export interface Route {
  section: Section;
  partnerId?: string | undefined;
}

const BASE = import.meta.env.BASE_URL; // '/admin/'

export function routeOf(location: Location): Route {
  const name = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length).split('/')[0] : '';
  const section = SECTIONS.find((candidate) => candidate.id === name)?.id ?? 'partners';
  const partnerId = new URLSearchParams(location.search).get('partner_id') ?? undefined;
  return { section, partnerId };
}

export const hrefOf = (route: Route) => `${BASE}${route.section}${route.partnerId === undefined ? '' : `?partner_id=${encodeURIComponent(route.partnerId)}`}`;

export function useRoute(): [Route, (route: Route) => void] {
  const [route, setRoute] = useState(() => routeOf(window.location));
  useEffect(() => {
    const onPop = () => setRoute(routeOf(window.location));
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  const navigate = useCallback((next: Route) => {
    window.history.pushState(null, '', hrefOf(next));
    setRoute(next);
  }, []);
  return [route, navigate];
}
