/**
 * The admin console (`/admin`) in headless Chromium, as its browser tests drive it: the console built first (once,
 * even when several test files start at the same time), a browser whose every request, every answer of 400 or
 * more, page error and console error is recorded, sign-in with an admin token, and screenshots.
 *
 * Imports nothing that reads the service's configuration, so a test file can set its environment first (a delivery
 * world, `delivery-world.ts`) and still import this at its top.
 */
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { consoleBuildIsFresh, ensureConsoleBuilt } from '../../infra/shared/console-build';
import type { TestApi } from './api';
import { type Browser, launchChromium } from './browser';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
/** `.data/screenshots/`; with `UPDATE_SCREENSHOTS=1`, `docs/images/` (the pictures docs/admin-console.md shows). */
const SCREENSHOTS = join(ROOT, process.env.UPDATE_SCREENSHOTS === '1' ? 'docs/images' : '.data/screenshots');
const VIEWPORT = { width: 1440, height: 900 };
export const STEP_TIMEOUT_MS = 30_000;

/** Held while one test file builds the console: a second file waits for that build instead of starting its own. */
const BUILD_LOCK = join(ROOT, '.data/console-build.lock');
/** A lock older than a build can take was left by a run that stopped mid-build. */
const STALE_LOCK_MS = 120_000;

/** How many of each recorded problem there were at a point of a test ({@link ConsoleBrowser.mark}). */
export interface Mark {
  failedResponses: number;
  pageErrors: number;
  consoleErrors: number;
}

export interface ConsoleBrowser {
  page: Page;
  /** The service's own address, by IP (TestApi's base URL names localhost): any other host is outside. */
  origin: string;
  /** Every request of the browser context, as `METHOD url`. */
  requests: string[];
  /** Every answer of 400 or more, as `status url`. */
  failedResponses: string[];
  pageErrors: string[];
  consoleErrors: string[];
  /** The requests that went anywhere but 127.0.0.1 (data:, blob: and about: URLs stay inside the page). */
  outsideRequests(): string[];
  /** The requests to the service's `/api/` routes. */
  apiCalls(): string[];
  mark(): Mark;
  /** The failed answers, page errors and console errors recorded since `mark`. */
  problemsSince(mark: Mark): { newFailedResponses: string[]; newPageErrors: string[]; newConsoleErrors: string[] };
  /** Saves the page as `console-<section>.png`. */
  saveScreenshot(section: string): Promise<void>;
  /** Closes the browser and removes its profile. */
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Builds the console (Vite) unless `console/dist` is fresh. Two test files building at once would empty each
 * other's output folder, so the build runs under a lock (a directory: its creation is atomic).
 */
export async function buildConsole(): Promise<void> {
  mkdirSync(dirname(BUILD_LOCK), { recursive: true });
  for (;;) {
    if (consoleBuildIsFresh()) return;
    try {
      mkdirSync(BUILD_LOCK);
      break;
    } catch {
      const age = Date.now() - (statSync(BUILD_LOCK, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > STALE_LOCK_MS) rmSync(BUILD_LOCK, { recursive: true, force: true });
      await sleep(250);
    }
  }
  try {
    await ensureConsoleBuilt(() => undefined);
  } finally {
    rmSync(BUILD_LOCK, { recursive: true, force: true });
  }
}

/** A fresh headless Chromium on the console's service, recording what its pages do. */
export async function openConsoleBrowser(api: Pick<TestApi, 'baseUrl'>, name: string): Promise<ConsoleBrowser> {
  const origin = `http://127.0.0.1:${new URL(api.baseUrl).port}`;
  const browser: Browser = await launchChromium({ name, viewport: VIEWPORT, timeoutMs: STEP_TIMEOUT_MS });
  const { context } = browser;
  const requests: string[] = [];
  const failedResponses: string[] = [];
  const pageErrors: string[] = [];
  const consoleErrors: string[] = [];
  context.on('request', (request) => requests.push(`${request.method()} ${request.url()}`));
  context.on('response', (response) => {
    if (response.status() >= 400) failedResponses.push(`${response.status()} ${response.url()}`);
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(STEP_TIMEOUT_MS);
  page.on('pageerror', (error) => pageErrors.push(String(error)));
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(`${message.text()} (${message.location().url})`);
  });
  const urlOf = (request: string) => new URL(request.slice(request.indexOf(' ') + 1));
  return {
    page,
    origin,
    requests,
    failedResponses,
    pageErrors,
    consoleErrors,
    outsideRequests: () =>
      requests.filter((request) => {
        const { protocol, hostname } = urlOf(request);
        return !['data:', 'blob:', 'about:'].includes(protocol) && hostname !== '127.0.0.1';
      }),
    apiCalls: () => requests.filter((request) => urlOf(request).pathname.startsWith('/api/')),
    mark: () => ({ failedResponses: failedResponses.length, pageErrors: pageErrors.length, consoleErrors: consoleErrors.length }),
    problemsSince: (mark) => ({
      newFailedResponses: failedResponses.slice(mark.failedResponses),
      newPageErrors: pageErrors.slice(mark.pageErrors),
      newConsoleErrors: consoleErrors.slice(mark.consoleErrors),
    }),
    saveScreenshot: async (section) => {
      mkdirSync(SCREENSHOTS, { recursive: true });
      writeFileSync(join(SCREENSHOTS, `console-${section}.png`), await page.screenshot());
    },
    close: () => browser.close(),
  };
}

/** Opens the console and signs in with `token`; resolves on the first section (Partners). */
export async function signIn(browser: Pick<ConsoleBrowser, 'page' | 'origin'>, token: string): Promise<void> {
  const { page, origin } = browser;
  await page.goto(`${origin}/admin`, { waitUntil: 'load' });
  await page.getByLabel('Admin token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Partners', level: 2 }).waitFor();
}
