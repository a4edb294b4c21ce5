/**
 * The API reference page (`GET /api/v1/docs`) renders in a real browser: headless Chromium (Debian's, driven by
 * playwright-core) loads it from the local HTTP API, Scalar's viewer (served by this service) fetches the OpenAPI
 * document and renders it once, and the page reaches no host but this service's and reports no error. A passing
 * run saves the first screen to `.data/screenshots/api-reference.png`; with `UPDATE_SCREENSHOTS=1`, to
 * docs/images/api-reference.png (the picture the docs show), so an ordinary run never changes a tracked file.
 *
 * Needs Debian's Chromium at /usr/bin/chromium (`apt-get install chromium`; `.ci/run` installs it). Without it
 * this file fails: it does not skip. It never downloads a browser.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { scalarVersion } from '../../../lib/http/docs-viewer';
import { TestApi } from '../../support/api';
import { type Browser, launchChromium } from '../../support/browser';

const SCREENSHOT = join(dirname(fileURLToPath(import.meta.url)), '../../..', process.env.UPDATE_SCREENSHOTS === '1' ? 'docs/images' : '.data/screenshots', 'api-reference.png');
const VIEWPORT = { width: 1440, height: 900 };
/** The viewer script is 3.7 MB, parsed and run on a small machine that may be busy: be patient. */
const STEP_TIMEOUT_MS = 120_000;

const CHECKOUT_INTENT = { path: '/api/v1/transactions/checkout-intent', summary: 'Create a checkout intent', tag: 'Transactions' };

let api: TestApi | undefined;
let context: BrowserContext | undefined;
let browser: Browser | undefined;
let page: Page;
/** Every request of the browser context (the page's, and any worker's), and every answer of 400 or more. */
const requests: string[] = [];
const failedResponses: string[] = [];
/** Requests under way, and when one last started or ended (see `networkQuiet`). */
let inFlight = 0;
let lastNetworkActivity = Date.now();
/** Uncaught exceptions and unhandled rejections of the page, and what it logged with console.error. */
const pageErrors: string[] = [];
const consoleErrors: string[] = [];
/** Scalar's own check of the document: it warns "document validation errors" for a schema it cannot read. */
const documentWarnings: string[] = [];

beforeAll(async () => {
  api = await TestApi.start();
  browser = await launchChromium({ name: 'api-docs', viewport: VIEWPORT, timeoutMs: STEP_TIMEOUT_MS });
  context = browser.context;
  context.on('request', (request) => {
    requests.push(`${request.method()} ${request.url()}`);
    inFlight += 1;
    lastNetworkActivity = Date.now();
  });
  const settled = () => {
    inFlight -= 1;
    lastNetworkActivity = Date.now();
  };
  context.on('requestfinished', settled);
  context.on('requestfailed', settled);
  context.on('response', (response) => {
    if (response.status() >= 400) failedResponses.push(`${response.status()} ${response.url()}`);
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.on('pageerror', (error) => pageErrors.push(String(error)));
  page.on('console', (message) => {
    if (message.type() === 'warning' && message.text().includes('validation')) documentWarnings.push(message.text());
    // Not the page's: Chromium's own look for /favicon.ico, which this service does not serve (404).
    if (message.type() !== 'error' || new URL(message.location().url || 'about:blank').pathname === '/favicon.ico') return;
    consoleErrors.push(`${message.text()} (${message.location().url})`);
  });
}, STEP_TIMEOUT_MS + 30_000);

afterAll(async () => {
  await browser?.close();
  await api?.close();
});

/**
 * Waits until the page has had no request under way for `quietMs` (what it fetches once rendered, fonts and the
 * like, has been asked for by then). Playwright's own 'networkidle' does not serve here: on this page it never
 * came (playwright-core 1.65, Chromium 150), perhaps because Scalar rewrites the URL before the load event.
 */
async function networkQuiet(quietMs = 2_000, timeoutMs = STEP_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (inFlight > 0 || Date.now() - lastNetworkActivity < quietMs) {
    if (Date.now() > deadline) throw new Error(`the page's network was not quiet for ${quietMs} ms within ${timeoutMs} ms (${inFlight} requests under way)`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The requests that went anywhere but 127.0.0.1 (data: and blob: URLs stay inside the page). */
const outsideRequests = () =>
  requests.filter((request) => {
    const { protocol, hostname } = new URL(request.slice(request.indexOf(' ') + 1));
    return !['data:', 'blob:', 'about:'].includes(protocol) && hostname !== '127.0.0.1';
  });

describe('GET /api/v1/docs in headless Chromium', () => {
  it(
    'renders the OpenAPI document once with Scalar, reaching no host but 127.0.0.1 and reporting no error',
    async () => {
      // The service's own address, by IP (TestApi's base URL names localhost): any other host is outside.
      const docsUrl = `http://127.0.0.1:${new URL(api!.baseUrl).port}/api/v1/docs`;
      const response = await page.goto(docsUrl, { waitUntil: 'load', timeout: STEP_TIMEOUT_MS });
      expect(response?.status()).toBe(200);

      // Scalar has fetched /api/v1/openapi.json and rendered it: its title, then the Transactions tag's section
      // (collapsed: it lists its endpoints, POST /api/v1/transactions/checkout-intent among them).
      const title = page.getByRole('heading', { level: 1, name: 'Partner Payments Service', exact: true });
      await title.waitFor({ timeout: STEP_TIMEOUT_MS });
      const tagSection = page.getByRole('region', { name: new RegExp(`^${CHECKOUT_INTENT.tag}\\b`) });
      await tagSection.getByRole('heading', { level: 2, name: new RegExp(`^${CHECKOUT_INTENT.tag}( \\(Collapsed\\))?$`) }).waitFor({ timeout: STEP_TIMEOUT_MS });
      await tagSection.getByRole('list', { name: `${CHECKOUT_INTENT.tag} endpoints` }).getByText(CHECKOUT_INTENT.path, { exact: true }).waitFor({ timeout: STEP_TIMEOUT_MS });
      await networkQuiet();
      const firstScreen = await page.screenshot();
      const titleBox = await title.boundingBox();

      // Opening the tag renders its operations: the route's heading, its summary.
      await tagSection.getByRole('button', { name: `Show all ${CHECKOUT_INTENT.tag} endpoints` }).click({ timeout: STEP_TIMEOUT_MS });
      const operation = page.getByRole('heading', { name: CHECKOUT_INTENT.summary, exact: true });
      await operation.first().waitFor({ timeout: STEP_TIMEOUT_MS });
      await operation.first().scrollIntoViewIfNeeded({ timeout: STEP_TIMEOUT_MS });
      await networkQuiet();

      const references = page.getByRole('main');
      const referenceNames = await Promise.all((await references.all()).map((main) => main.getAttribute('aria-label')));
      expect({
        // One reference, of this document, whose title is on the first screen (not a second, empty viewer).
        references: referenceNames,
        titleOnFirstScreen: titleBox !== null && titleBox.y >= 0 && titleBox.y + titleBox.height <= VIEWPORT.height,
        outsideRequests: outsideRequests(),
        failedResponses,
        pageErrors,
        consoleErrors,
        documentWarnings,
      }).toEqual({
        references: ['Open API Documentation for Partner Payments Service'],
        titleOnFirstScreen: true,
        outsideRequests: [],
        failedResponses: [],
        pageErrors: [],
        consoleErrors: [],
        documentWarnings: [],
      });
      expect(requests).toEqual(expect.arrayContaining([`GET ${docsUrl}`, `GET ${docsUrl}/scalar.js?v=${scalarVersion()}`, expect.stringMatching(/^GET http:\/\/127\.0\.0\.1:\d+\/api\/v1\/openapi\.json$/)]));

      mkdirSync(dirname(SCREENSHOT), { recursive: true });
      writeFileSync(SCREENSHOT, firstScreen);
    },
    STEP_TIMEOUT_MS * 4,
  );
});
