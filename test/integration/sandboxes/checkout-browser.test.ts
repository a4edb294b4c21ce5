/**
 * The sandbox checkout page (`/sandbox/checkout`) in headless Chromium, on a service started as a user
 * starts it (`npm start`, its own ports, the local defaults): a buyer picks a product, the payment element's submit
 * step refuses an empty card without calling the processor, a declined card is reported and reconciled as failed,
 * a good card pays, and the page shows the payment service's status read by `svc_tx_id` through the partner
 * backend. Then the admin console shows the same payment succeeded and the sandbox backend's webhook deliveries.
 * Every request stays on 127.0.0.1; the only failed answer is the processor's 402 for the declined card.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startService, stopService, type ServiceProcess } from '../../../infra/local/runtime/service-process';
import { issueLocalAdminToken } from '../../../lib/auth/admin-token';
import { loadConfig } from '../../../lib/config';
import { buildConsole, type ConsoleBrowser, openConsoleBrowser, signIn } from '../../support/console-browser';
import { waitFor } from '../../support/npm-start';

let service: ServiceProcess | undefined;
let browser: ConsoleBrowser | undefined;
let dataDir: string;
let token: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'sandbox-checkout-'));
  await buildConsole();
  service = await startService(dataDir, () => ({}), { localDefaults: true, logFile: join(dataDir, 'service.log') });
  // The service runs on the local defaults: so does the token it checks.
  token = await issueLocalAdminToken(loadConfig({}));
  browser = await openConsoleBrowser({ baseUrl: service.baseUrl }, 'sandbox-checkout');
}, 180_000);

afterAll(async () => {
  await browser?.close();
  if (service !== undefined) await stopService(service);
  rmSync(dataDir, { recursive: true, force: true });
});

const admin = async (path: string) => {
  const response = await fetch(`${service!.baseUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, body: (await response.json()) as any };
};

/** How Chromium logs the processor's 402 to the declined card's confirmation. */
const DECLINE_LOGGED = /^Failed to load resource: the server responded with a status of 402 \(Payment Required\) \(http:\/\/127\.0\.0\.1:\d+\/v1\/payment_intents\/pi_\w+\/confirm\)$/;

const fillCard = async (number: string) => {
  const { page } = browser!;
  await page.getByLabel('Card number').fill(number);
  await page.getByLabel('Expiration date (MM / YY)').fill(`12 / ${String((new Date().getFullYear() + 2) % 100).padStart(2, '0')}`);
  await page.getByLabel('Security code').fill('123');
};

describe('the sandbox checkout page', () => {
  it(
    'pays through the processor from the browser, submit step first, and shows the status the service reports by svc_tx_id',
    async () => {
      const { page, origin } = browser!;
      const confirmCalls = () => browser!.requests.filter((request) => /^POST .*\/v1\/payment_intents\/[^/]+\/confirm$/.test(request));

      // Arrange: the page and its products (the sandbox partner is made on this first visit).
      const opened = await page.goto(`${origin}/sandbox/checkout`, { waitUntil: 'load' });
      expect(opened?.status()).toBe(200);
      await page.getByRole('button', { name: 'Buy Sandbox hoodie' }).click();
      await page.getByLabel('Card number').waitFor();
      const summary = (await page.locator('#order-summary').textContent()) ?? '';

      // Act 1: Pay with no card: the element's submit step refuses it, and nothing reaches the processor.
      await page.getByRole('button', { name: 'Pay $49.99' }).click();
      await page.getByRole('alert').filter({ hasText: /card number/i }).waitFor();
      const confirmsAfterEmpty = confirmCalls().length;

      // Act 2: a declined card: the processor refuses it, and the page shows what the service then says (failed).
      await fillCard('4000 0000 0000 0002');
      await page.getByRole('button', { name: 'Pay $49.99' }).click();
      await page.locator('#result[data-status="failed"]').waitFor();
      const declinedMessage = (await page.getByRole('alert').textContent()) ?? '';
      const svcTxId = (await page.locator('#svc-tx-id').textContent()) ?? '';
      await browser!.saveScreenshot('sandbox-checkout-declined');

      // Act 3: a good card pays the same payment (failed → succeeded).
      await fillCard('4242 4242 4242 4242');
      await page.getByRole('button', { name: 'Pay $49.99' }).click();
      await page.locator('#result[data-status="succeeded"]').waitFor();
      const resultText = (await page.locator('#result-text').textContent()) ?? '';
      await browser!.saveScreenshot('sandbox-checkout');

      // Assert: the service holds the payment as the page showed it, and the page read it by svc_tx_id.
      const transaction = await admin(`/admin/transactions/${svcTxId}`);
      expect({
        summary,
        confirmsAfterEmpty,
        confirms: confirmCalls().length,
        declinedMessage,
        resultText,
        transaction: { status: transaction.status, txStatus: transaction.body.status, amount: transaction.body.amount, currency: transaction.body.currency, client: transaction.body.clientId },
        reconciledBySvcTxId: browser!.requests.some((request) => request === `GET ${origin}/sandbox/payments/${svcTxId}`),
        outsideRequests: browser!.outsideRequests(),
        // The processor's answer to the declined card is the one refusal the page should meet.
        failedResponses: browser!.failedResponses.map((response) => response.replace(/pi_\w+/, 'pi_…')),
        pageErrors: browser!.pageErrors,
        // Chromium logs the declined card's 402 as a console error: that one line, and nothing else.
        consoleErrors: browser!.consoleErrors.map((message) => (DECLINE_LOGGED.test(message) ? 'the decline' : message)),
      }).toEqual({
        summary: expect.stringMatching(/^Order order-[\w-]+: Sandbox hoodie, \$49\.99$/),
        confirmsAfterEmpty: 0,
        confirms: 2,
        declinedMessage: expect.stringMatching(/declined/i),
        resultText: 'Paid. The payment service confirms the payment succeeded.',
        transaction: { status: 200, txStatus: 'succeeded', amount: 49.99, currency: 'USD', client: 'sandbox-merchant' },
        reconciledBySvcTxId: true,
        outsideRequests: [],
        failedResponses: [expect.stringMatching(/^402 http:\/\/127\.0\.0\.1:\d+\/v1\/payment_intents\/pi_…\/confirm$/)],
        pageErrors: [],
        consoleErrors: ['the decline'],
      });

      // Act 4: the console shows the same payment succeeded, and the sandbox backend's deliveries.
      const mark = browser!.mark();
      await signIn(browser!, token);
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Transactions' }).click();
      await page.getByRole('form', { name: 'Search transactions' }).getByLabel('svc_tx_id').fill(svcTxId);
      await page.getByRole('form', { name: 'Search transactions' }).getByRole('button', { name: 'Search' }).click();
      const row = page.getByRole('table', { name: 'Transactions' }).getByRole('row').filter({ hasText: svcTxId });
      await row.getByRole('cell', { name: 'succeeded', exact: true }).waitFor();
      await browser!.saveScreenshot('sandbox-checkout-transaction');
      const partners = await admin('/admin/partners?limit=100');
      const sandboxPartner = partners.body.items.find((partner: { name: string }) => partner.name === 'Sandbox checkout');
      // Deliveries are sent from a queue, after the payment moved: wait for both to be answered.
      const deliveries = await waitFor(async () => {
        const listed = await admin(`/admin/partners/${sandboxPartner.partner_id}/webhook-deliveries`);
        const ours = (listed.body.items as { svc_tx_id: string; event: string; status: string }[]).filter((delivery) => delivery.svc_tx_id === svcTxId);
        const seen = ours.map((delivery) => `${delivery.event} ${delivery.status}`).sort();
        return seen.length === 2 && seen.every((line) => line.endsWith(' succeeded')) ? seen : undefined;
      }, 20_000, "the sandbox backend's two deliveries to succeed");

      expect({
        rowText: await row.textContent(),
        deliveries,
        problems: browser!.problemsSince(mark),
      }).toEqual({
        rowText: expect.stringContaining('$49.99'),
        deliveries: ['transaction_failed succeeded', 'transaction_succeeded succeeded'],
        problems: { newFailedResponses: [], newPageErrors: [], newConsoleErrors: [] },
      });
    },
    180_000,
  );
});
