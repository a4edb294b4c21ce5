/**
 * The admin console's OpenID sign-in (`console/src/oidc.ts`) in headless Chromium, end to end: the console as the
 * console stack serves it in AWS, a fake OpenID provider (`test/support/fake-oidc-provider.ts`), and the service's
 * local HTTP API verifying admin tokens against that provider's JWKS (`ADMIN_JWKS_URL`, as in AWS).
 *
 * The browser reaches the service through a small proxy standing in for the CloudFront distribution
 * (`startDistribution`): it answers `/admin/config.json` with what the stack writes into the bucket for this
 * provider, and puts the stack's Content-Security-Policy (the provider's origin in `connect-src`) on the console's
 * answers, as the response headers policy does (`infra/shared/console-site.ts` builds both, for the stack and here).
 *
 * Checked: Authorization Code + PKCE (S256) with `state` and `nonce`, the code exchanged from the page, the access
 * token kept in sessionStorage and sent as the bearer token that the admin API accepts; a forged `state` and a
 * foreign `nonce` refused, with nothing kept.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page, Request } from 'playwright-core';
import { CONSOLE_CONFIG_PATH, consoleContentSecurityPolicy, consoleRuntimeConfig } from '../../../infra/shared/console-site';
import { type Browser, launchChromium } from '../../support/browser';
import { buildConsole } from '../../support/console-browser';
import { type FakeOidcProvider, startFakeOidcProvider } from '../../support/fake-oidc-provider';

const CLIENT_ID = 'partner-payments-console';
const API_AUDIENCE = 'partner-payments-admin';
const STEP_TIMEOUT_MS = 30_000;
const TOKEN_KEY = 'admin-console.token';

let provider: FakeOidcProvider;
let api: { close(): Promise<void>; baseUrl: string } | undefined;
let distribution: { origin: string; close(): Promise<void> } | undefined;
let browser: Browser | undefined;
let page: Page;
let origin: string;
/** The bearer tokens of the admin API calls the page made, and the errors it reported. */
const bearers: string[] = [];
const pageErrors: string[] = [];
const consoleErrors: string[] = [];
const savedEnv = { ...process.env };

beforeAll(async () => {
  await buildConsole();
  provider = await startFakeOidcProvider({ clientId: CLIENT_ID, apiAudience: API_AUDIENCE });
  // The service reads its configuration once, when first imported: in this test file, after these are set.
  process.env.ADMIN_JWKS_URL = `${provider.issuer}/jwks`;
  process.env.ADMIN_JWT_ISSUER = provider.issuer;
  process.env.ADMIN_JWT_AUDIENCE = API_AUDIENCE;
  const { TestApi } = await import('../../support/api');
  api = await TestApi.start();
  distribution = await startDistribution(Number(new URL(api.baseUrl).port), provider.issuer);
  origin = distribution.origin;
  provider.redirectUris.add(`${origin}/admin/callback`);

  browser = await launchChromium({ name: 'admin-console-oidc', viewport: { width: 1280, height: 800 }, timeoutMs: STEP_TIMEOUT_MS });
  const { context } = browser;
  context.on('request', (sent: Request) => {
    const authorization = sent.headers().authorization;
    if (sent.url().startsWith(`${origin}/api/v1/admin/`) && authorization !== undefined) bearers.push(authorization);
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(STEP_TIMEOUT_MS);
  page.on('pageerror', (error) => pageErrors.push(String(error)));
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await distribution?.close();
  await api?.close();
  await provider?.close();
  process.env = savedEnv;
});

/**
 * Stands in for the console stack's distribution in front of the local service on `apiPort`: `/admin/config.json`
 * is what the stack writes into the bucket for this provider, and every `/admin` answer carries the stack's
 * Content-Security-Policy (the provider's origin in `connect-src`), which the response headers policy puts in
 * place of the origin's; everything else passes through unchanged, as `/api/*` does.
 */
async function startDistribution(apiPort: number, issuer: string): Promise<{ origin: string; close(): Promise<void> }> {
  const config = JSON.stringify(consoleRuntimeConfig({ issuer, clientId: CLIENT_ID, scopes: 'openid' }));
  const csp = consoleContentSecurityPolicy({ connectSources: [new URL(issuer).origin] });
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    if (req.method === 'GET' && new URL(path, 'http://x').pathname === CONSOLE_CONFIG_PATH) {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-cache', 'content-security-policy': csp }).end(config);
      return;
    }
    const upstream = request({ host: '127.0.0.1', port: apiPort, method: req.method, path, headers: { ...req.headers, host: `127.0.0.1:${apiPort}` } }, (answer) => {
      const headers = { ...answer.headers, ...(path.startsWith('/admin') ? { 'content-security-policy': csp } : {}) };
      res.writeHead(answer.statusCode ?? 502, headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A fresh tab state: signed out, on `path`. */
async function signedOutAt(path: string): Promise<void> {
  await page.goto(`${origin}/admin/`, { waitUntil: 'load' });
  await page.evaluate(() => sessionStorage.clear());
  await page.goto(`${origin}${path}`, { waitUntil: 'load' });
}

const storedToken = () => page.evaluate((key) => sessionStorage.getItem(key), TOKEN_KEY);

describe('the admin console signing in through an OpenID provider', () => {
  it(
    'runs Authorization Code + PKCE, keeps the access token for this tab, and calls the admin API with it',
    async () => {
      // Arrange: signed out on a section's page.
      await signedOutAt('/admin/transactions');
      const signIn = page.getByRole('button', { name: `Sign in with ${new URL(provider.issuer).host}` });
      await signIn.waitFor();
      const tokenFallback = await page.getByText('Sign in with an admin token instead').isVisible();

      // Act: sign in; the provider answers at once and sends the browser back.
      const firstApiAnswer = page.waitForResponse((answer) => answer.url().startsWith(`${origin}/api/v1/admin/`));
      await signIn.click();
      await page.getByRole('heading', { name: 'Transactions', level: 2 }).waitFor();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();

      // Assert: the authorization request, the exchange, the token kept and sent.
      const authorization = provider.authorizations.at(-1);
      const exchange = provider.tokenRequests.at(-1);
      expect(tokenFallback).toBe(true);
      expect(Object.fromEntries(authorization ?? [])).toEqual({
        response_type: 'code',
        client_id: CLIENT_ID,
        redirect_uri: `${origin}/admin/callback`,
        scope: 'openid',
        state: expect.stringMatching(/^[\w-]{43}$/),
        nonce: expect.stringMatching(/^[\w-]{43}$/),
        code_challenge: expect.stringMatching(/^[\w-]{43}$/),
        code_challenge_method: 'S256',
      });
      expect(exchange?.get('code_verifier')).toMatch(/^[\w-]{43}$/);
      expect(exchange?.get('client_id')).toBe(CLIENT_ID);
      expect(exchange?.has('client_secret')).toBe(false);
      const accessToken = provider.accessTokens.at(-1);
      expect(await storedToken()).toBe(accessToken);
      expect(await page.evaluate(() => sessionStorage.getItem('admin-console.oidc-pending'))).toBeNull();
      // Back where the sign-in started, with the code and state gone from the address bar.
      expect(new URL(page.url()).pathname + new URL(page.url()).search).toBe('/admin/transactions');
      expect(bearers.length).toBeGreaterThan(0);
      expect(new Set(bearers)).toEqual(new Set([`Bearer ${accessToken}`]));
      // The admin API (checking the provider's JWKS, issuer, audience and role) accepted it.
      expect((await firstApiAnswer).status()).toBe(200);
      expect(await page.getByRole('alert').count()).toBe(0);
      expect(pageErrors).toEqual([]);
      expect(consoleErrors).toEqual([]);
    },
    60_000,
  );

  it(
    'refuses an answer whose state is not the one this tab started with, and never exchanges its code',
    async () => {
      await signedOutAt('/admin/partners');
      const exchangesBefore = provider.tokenRequests.length;
      provider.tamper.state = 'forged-state';

      await page.getByRole('button', { name: /^Sign in with / }).click();
      const alert = page.getByRole('alert');
      await alert.waitFor();

      expect(await alert.textContent()).toContain('state mismatch');
      expect(provider.tokenRequests.length).toBe(exchangesBefore);
      expect(await storedToken()).toBeNull();
      expect(new URL(page.url()).search).toBe('');
      // The admin can start again from there.
      expect(await page.getByRole('button', { name: /^Sign in with / }).isVisible()).toBe(true);
    },
    60_000,
  );

  it(
    'refuses an ID token whose nonce is not this sign-in’s, and keeps no token',
    async () => {
      await signedOutAt('/admin/partners');
      provider.tamper.nonce = 'someone-elses-nonce';

      await page.getByRole('button', { name: /^Sign in with / }).click();
      const alert = page.getByRole('alert');
      await alert.waitFor();

      expect(await alert.textContent()).toContain('nonce mismatch');
      expect(await storedToken()).toBeNull();
    },
    60_000,
  );
});
