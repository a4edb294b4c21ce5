/**
 * The admin console (`/admin`, built from `console/` by Vite) in a real browser: headless Chromium (Debian's,
 * driven by playwright-core) signs in with an admin token, creates, edits and suspends a partner, issues it an API
 * key (shown once) and revokes it, adds and deletes a webhook endpoint, shows a payment's fees, runs settlement,
 * pays the batch and downloads its report; shows a payment's refunded and disputed amounts, the merchants that owe
 * money (Balances) with since when they owe, marked when that is more than 7 days, and a batch's adjustments by type
 * (decisions.md §5a), all through the admin API of the local HTTP API; the page reaches no host but
 * 127.0.0.1 and reports no error. Also, over plain HTTP: the files are served with their types and the page's
 * Content-Security-Policy, unknown app paths get the app's page, and no path reaches outside `console/dist`.
 *
 * The console is built once here (Vite's `build()`) unless `console/dist` is newer than every source file. A passing
 * run saves each screen to `.data/screenshots/console-<section>.png`; with `UPDATE_SCREENSHOTS=1`, to
 * docs/images/ (the pictures docs/admin-console.md shows). Needs Debian's Chromium at /usr/bin/chromium; never
 * downloads a browser.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { TestApi } from '../../support/api';
import { buildConsole, type ConsoleBrowser, openConsoleBrowser } from '../../support/console-browser';
import { eventBody, refundedCharge } from '../../support/processor-events';
import { chargeBack, postProcessorEvent, refund, transactionIn } from '../../support/settlement';

let api: TestApi | undefined;
let browser: ConsoleBrowser | undefined;
let page: Page;
let origin: string;
/** Every request of the browser context, every answer of 400 or more, the page's errors and console errors. */
let requests: string[] = [];
let failedResponses: string[] = [];
let pageErrors: string[] = [];
let consoleErrors: string[] = [];

beforeAll(async () => {
  await buildConsole();
  api = await TestApi.start();
  browser = await openConsoleBrowser(api, 'admin-console');
  ({ page, origin, requests, failedResponses, pageErrors, consoleErrors } = browser);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await api?.close();
});

/** The requests that went anywhere but 127.0.0.1 (data: URLs stay inside the page). */
const outsideRequests = () => browser!.outsideRequests();

const saveScreenshot = (section: string) => browser!.saveScreenshot(section);

describe('the admin console in headless Chromium', () => {
  it(
    'signs in, creates, edits and suspends a partner, issues it an API key shown once and revokes it, calling only this service',
    async () => {
      // Arrange: the sign-in screen.
      const name = `Console partner ${randomUUID().slice(0, 8)}`;
      const response = await page.goto(`${origin}/admin`, { waitUntil: 'load' });
      expect(response?.status()).toBe(200);
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      await saveScreenshot('sign-in');

      // Act: sign in, then create the partner.
      await page.getByLabel('Admin token').fill(api!.adminToken);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Partners', level: 2 }).waitFor();
      const createForm = page.getByRole('form', { name: 'Create a partner' });
      await createForm.getByLabel('Name').fill(name);
      await createForm.getByLabel('Service fee (%)').fill('2.5');
      await createForm.getByLabel('KYC status').selectOption('approved');
      await createForm.getByRole('button', { name: 'Create partner' }).click();
      const row = page.getByRole('table', { name: 'Partners' }).getByRole('row').filter({ hasText: name });
      await row.waitFor();
      const partnerId = (await row.locator('code').first().textContent()) ?? '';

      // Edit its rate limit and brand colour, then suspend it from its row.
      await row.getByRole('button', { name: 'Edit' }).click();
      const editor = page.getByRole('form', { name: `Edit ${name}` });
      await editor.getByLabel('Rate limit (per minute)').fill('120');
      await editor.getByLabel('Brand colour').fill('#1a2b3c');
      await saveScreenshot('partner-edit');
      await editor.getByRole('button', { name: 'Save changes' }).click();
      await editor.waitFor({ state: 'detached' });
      await row.getByText('120/min').waitFor();
      await row.getByRole('button', { name: 'Suspend' }).click();
      await row.getByRole('button', { name: 'Activate' }).waitFor();
      await saveScreenshot('partners');

      // Issue a key from the partner's API keys.
      await row.getByRole('button', { name: 'API keys' }).click();
      await page.getByRole('heading', { name: 'API keys', level: 2 }).waitFor();
      await page.getByText('This partner has no API keys.').waitFor();
      await page.getByRole('button', { name: 'Issue an API key' }).click();
      const issued = page.getByRole('region', { name: 'New API key' });
      await issued.waitFor();
      const apiKey = (await issued.getByLabel('API key (x-api-key)').textContent()) ?? '';
      const hmacSecret = (await issued.getByLabel('HMAC secret (signs x-svc-hmac)').textContent()) ?? '';
      const shownOnlyNow = await issued.getByText('Shown only now.').isVisible();
      const keyRows = page.getByRole('table', { name: 'API keys' }).getByRole('row');
      await keyRows.nth(1).waitFor();
      const keyId = (await keyRows.nth(1).locator('code').textContent()) ?? '';
      await saveScreenshot('api-keys');
      const keyStatusWhileListed = (await api!.admin('GET', `/admin/partners/${partnerId}/api-keys`)).body.items.map((key: { key_id: string }) => key.key_id);

      // Dismiss the secrets: once gone, no screen shows them again.
      await issued.getByRole('button', { name: 'I have copied them' }).click();
      await issued.waitFor({ state: 'detached' });
      await page.reload({ waitUntil: 'load' });
      await keyRows.nth(1).waitFor();
      const pageTextAfterReload = await page.locator('body').innerText();

      // Revoke the key, after the confirmation.
      page.once('dialog', (dialog) => void dialog.accept());
      await keyRows.nth(1).getByRole('button', { name: 'Revoke' }).click();
      await page.getByText('This partner has no API keys.').waitFor();

      // Assert: what the admin API now holds, and what the page did.
      const partner = await api!.admin('GET', `/admin/partners/${partnerId}`);
      const keysAfterRevoke = await api!.admin('GET', `/admin/partners/${partnerId}/api-keys`);
      expect({
        partner: {
          status: partner.body.status,
          kyc_status: partner.body.kyc_status,
          service_fee_percentage: partner.body.service_fee_percentage,
          rate_limit_per_minute: partner.body.rate_limit_per_minute,
          branding: partner.body.branding,
        },
        shownOnlyNow,
        secretsLookIssued: apiKey.length > 16 && hmacSecret.length > 16,
        keyStatusWhileListed,
        secretsAfterReload: [pageTextAfterReload.includes(apiKey), pageTextAfterReload.includes(hmacSecret)],
        keysAfterRevoke: keysAfterRevoke.body.items,
        outsideRequests: outsideRequests(),
        failedResponses,
        pageErrors,
        consoleErrors,
      }).toEqual({
        partner: {
          status: 'suspended',
          kyc_status: 'approved',
          service_fee_percentage: 2.5,
          rate_limit_per_minute: 120,
          branding: { display_name: name, logo_url: null, brand_color: '#1a2b3c' },
        },
        shownOnlyNow: true,
        secretsLookIssued: true,
        keyStatusWhileListed: [keyId],
        secretsAfterReload: [false, false],
        keysAfterRevoke: [],
        outsideRequests: [],
        failedResponses: [],
        pageErrors: [],
        consoleErrors: [],
      });
      // Every call the page made went to the admin API.
      const apiCalls = requests.filter((request) => new URL(request.slice(request.indexOf(' ') + 1)).pathname.startsWith('/api/'));
      expect(apiCalls.every((request) => new URL(request.slice(request.indexOf(' ') + 1)).pathname.startsWith('/api/v1/admin/'))).toBe(true);
      expect(apiCalls).toEqual(expect.arrayContaining([`POST ${origin}/api/v1/admin/partners`, `PATCH ${origin}/api/v1/admin/partners/${partnerId}`, `DELETE ${origin}/api/v1/admin/api-keys/${keyId}`]));
    },
    120_000,
  );

  it(
    'adds and deletes a webhook endpoint (its secret shown once), searches transactions and runs settlement for a partner',
    async () => {
      // Arrange: a partner of this test's own, and the console signed in from the previous test (same tab).
      const partner = await api!.admin('POST', '/admin/partners', { name: `Console webhooks ${randomUUID().slice(0, 8)}`, service_fee_percentage: 1 });
      const partnerId: string = partner.body.partner_id;
      const errorsBefore = { failedResponses: failedResponses.length, pageErrors: pageErrors.length, consoleErrors: consoleErrors.length };

      // Act: webhooks. Local runs allow plain http to a private address (ALLOW_INSECURE_WEBHOOK_URLS).
      await page.goto(`${origin}/admin/webhooks?partner_id=${partnerId}`, { waitUntil: 'load' });
      await page.getByText('This partner has no webhook endpoints.').waitFor();
      const form = page.getByRole('form', { name: 'Add a webhook endpoint' });
      await form.getByLabel('Name').fill('Orders');
      await form.getByLabel('URL').fill('http://127.0.0.1:9/webhooks');
      await form.getByLabel('transaction_refunded').check();
      await form.getByRole('button', { name: 'Add endpoint' }).click();
      const created = page.getByRole('region', { name: 'New webhook endpoint' });
      const secret = (await created.getByLabel('Signing secret').textContent()) ?? '';
      const endpointRow = page.getByRole('table', { name: 'Webhook endpoints' }).getByRole('row').filter({ hasText: 'Orders' });
      await endpointRow.waitFor();
      const endpointEvents = await endpointRow.getByRole('cell').nth(2).textContent();
      await page.getByText('No deliveries.').waitFor();
      await saveScreenshot('webhooks');
      await created.getByRole('button', { name: 'I have copied it' }).click();
      page.once('dialog', (dialog) => void dialog.accept());
      await endpointRow.getByRole('button', { name: 'Delete' }).click();
      await page.getByText('This partner has no webhook endpoints.').waitFor();
      const endpointsAfterDelete = (await api!.admin('GET', `/admin/partners/${partnerId}/webhook-endpoints`)).body.items;

      // Transactions: a reference nobody used finds nothing.
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Transactions' }).click();
      await page.getByRole('heading', { name: 'Transactions', level: 2 }).waitFor();
      await page.getByLabel('Partner reference').fill(`no-such-order-${randomUUID()}`);
      await page.getByRole('button', { name: 'Search' }).click();
      await page.getByText('No transactions match.').waitFor();

      // Settlements: a run for a partner without payments creates no batch.
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Settlements' }).click();
      await page.getByRole('heading', { name: 'Settlements', level: 2 }).waitFor();
      await page.getByLabel('Partner id (empty: every partner)').fill(partnerId);
      await page.getByRole('button', { name: 'Run settlement' }).click();
      await page.getByText('Nothing was eligible: no batch created.').waitFor();

      // Assert
      expect({
        secretLooksIssued: secret.startsWith('whsec_'),
        endpointEvents,
        endpointsAfterDelete,
        newFailedResponses: failedResponses.slice(errorsBefore.failedResponses),
        newPageErrors: pageErrors.slice(errorsBefore.pageErrors),
        newConsoleErrors: consoleErrors.slice(errorsBefore.consoleErrors),
        outsideRequests: outsideRequests(),
      }).toEqual({
        secretLooksIssued: true,
        endpointEvents: 'transaction_succeeded, transaction_failed, transaction_refunded',
        endpointsAfterDelete: [],
        newFailedResponses: [],
        newPageErrors: [],
        newConsoleErrors: [],
        outsideRequests: [],
      });
      expect(requests).toEqual(expect.arrayContaining([`POST ${origin}/api/v1/admin/settlements/run?partner_id=${partnerId}`]));
    },
    120_000,
  );

  it(
    "shows a payment's fee breakdown, then settles it: runs settlement, pays the batch and downloads its report",
    async () => {
      // Arrange: two payments of yesterday, succeeded (the processor's event), for a merchant of a new partner.
      const partner = await api!.createPartner();
      const clientId = await api!.createClient(partner);
      const payments = [];
      for (const amountMinor of [2500, 1250]) payments.push(await transactionIn(api!, { partnerId: partner.partnerId, clientId }, { amountMinor, currency: 'USD' }));
      const errorsBefore = { failedResponses: failedResponses.length, pageErrors: pageErrors.length, consoleErrors: consoleErrors.length };

      // Act: find the first payment by its id and open its fees.
      await page.goto(`${origin}/admin/transactions`, { waitUntil: 'load' });
      await page.getByLabel('svc_tx_id').fill(payments[0]!.svcTxId);
      await page.getByRole('button', { name: 'Search' }).click();
      const txRow = page.getByRole('table', { name: 'Transactions' }).getByRole('row').filter({ hasText: payments[0]!.svcTxId });
      await txRow.getByRole('button', { name: 'Fees' }).click();
      const breakdown = page.getByRole('region', { name: 'Fee breakdown' });
      await breakdown.waitFor();
      const breakdownText = await breakdown.innerText();
      await saveScreenshot('transactions');

      // Run settlement for the partner, pay its batch, download the report.
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Settlements' }).click();
      await page.getByLabel('Partner id (empty: every partner)').fill(partner.partnerId);
      await page.getByRole('button', { name: 'Run settlement' }).click();
      await page.getByText('1 batch(es) created.').waitFor();
      const batchRow = page.getByRole('table', { name: 'Settlement batches' }).getByRole('row').filter({ hasText: partner.partnerId });
      const batchId = (await batchRow.locator('code').first().textContent()) ?? '';
      page.once('dialog', (dialog) => void dialog.accept());
      await batchRow.getByRole('button', { name: 'Pay' }).click();
      await page.getByText(`Batch ${batchId} paid`, { exact: false }).waitFor();
      await batchRow.getByRole('cell', { name: 'sent', exact: true }).waitFor();
      const [download] = await Promise.all([page.waitForEvent('download'), batchRow.getByRole('button', { name: 'CSV' }).click()]);
      const report = readFileSync((await download.path()) ?? '', 'utf8');
      await saveScreenshot('settlements');

      // Assert: the page showed the service's split, and the batch is paid as the API says.
      const batch = (await api!.admin('GET', `/admin/settlements?partner_id=${partner.partnerId}`)).body.items[0];
      expect({
        breakdownNamesEachPart: ['Amount', 'Processor fee', 'Platform fee', 'Net to the merchant'].every((label) => breakdownText.includes(label)),
        breakdownShowsAmount: breakdownText.includes('$25.00'),
        batch: { id: batch.id, status: batch.status, payments: batch.transactionIds.length },
        reportName: download.suggestedFilename(),
        reportRows: report.trim().split('\n').map((line) => line.split(',')[0]).slice(1),
        newFailedResponses: failedResponses.slice(errorsBefore.failedResponses),
        newPageErrors: pageErrors.slice(errorsBefore.pageErrors),
        newConsoleErrors: consoleErrors.slice(errorsBefore.consoleErrors),
        outsideRequests: outsideRequests(),
      }).toEqual({
        breakdownNamesEachPart: true,
        breakdownShowsAmount: true,
        batch: { id: batchId, status: 'sent', payments: 2 },
        reportName: `settlement-${batchId}.csv`,
        reportRows: ['transaction', 'transaction', 'total'],
        newFailedResponses: [],
        newPageErrors: [],
        newConsoleErrors: [],
        outsideRequests: [],
      });
    },
    120_000,
  );

  it(
    "shows refunded and disputed amounts, the merchant that owes in Balances (and not the one that does not) with since when it owes, and a batch's adjustments by type, as the admin API answers them",
    async () => {
      // Arrange, through the HTTP API and the processor's signed events: a partner with two merchants; every payment
      // of yesterday (a day-boundary run takes it) and succeeded by `payment_intent.succeeded`.
      const partner = await api!.createPartner();
      const owes = await api!.createClient(partner, { client_id: `owes-${randomUUID().slice(0, 8)}` });
      const earns = await api!.createClient(partner, { client_id: `earns-${randomUUID().slice(0, 8)}` });
      const payee = (clientId: string) => ({ partnerId: partner.partnerId, clientId });
      // The merchant that owes: its sale settled and paid out, then refunded in full.
      const sale = await transactionIn(api!, payee(owes), { amountMinor: 2500, currency: 'USD' });
      const firstRun = await api!.admin('POST', `/admin/settlements/run?partner_id=${partner.partnerId}&client_id=${owes}`);
      const paidOut = await api!.admin('POST', `/admin/settlements/${firstRun.body.batches[0].id}/pay`);
      const refundSent = Date.now();
      await refund(api!, sale);
      const refundDone = Date.now();
      // The merchant that does not owe: a payment refunded in part ($15 of $40), and one charged back ($30).
      const partlyRefunded = await transactionIn(api!, payee(earns), { amountMinor: 4000, currency: 'USD' });
      await postProcessorEvent(api!, eventBody('charge.refunded', refundedCharge(partlyRefunded.processorPaymentIntentId ?? '', 4000, 1500, 'usd')));
      const disputed = await transactionIn(api!, payee(earns), { amountMinor: 3000, currency: 'USD' });
      await chargeBack(api!, disputed);
      const adminTx = async (svcTxId: string) => (await api!.admin('GET', `/admin/transactions/${svcTxId}`)).body;
      const mark = browser!.mark();
      /** An amount as the console formats it (`format.ts`: the browser's locale), from the API's number. */
      const shown = (amount: number, currency = 'USD') =>
        page.evaluate(([value, code]) => new Intl.NumberFormat(undefined, { style: 'currency', currency: code }).format(value), [amount, currency] as const);
      /** A time as the console formats it (`format.ts` `when`: the browser's locale), from the API's ISO timestamp. */
      const shownWhen = (timestamp: string) => page.evaluate((value) => new Date(value).toLocaleString(), timestamp);

      // Act 1: each payment in Transactions, its list marks and its breakdown.
      await page.goto(`${origin}/admin/transactions`, { waitUntil: 'load' });
      const search = page.getByRole('form', { name: 'Search transactions' });
      const openTransaction = async (svcTxId: string, screenshot: string) => {
        await search.getByLabel('svc_tx_id').fill(svcTxId);
        await search.getByRole('button', { name: 'Search' }).click();
        const row = page.getByRole('table', { name: 'Transactions' }).getByRole('row').filter({ hasText: svcTxId });
        await row.getByRole('button', { name: 'Fees' }).click();
        const breakdown = page.getByRole('region', { name: 'Fee breakdown' });
        await breakdown.getByText(svcTxId).waitFor();
        const details = await breakdown
          .locator('dl > div')
          .evaluateAll((items) => Object.fromEntries(items.map((item) => [item.querySelector('dt')?.textContent ?? '', item.querySelector('dd')?.textContent ?? ''])));
        const shownTx = { marks: await row.locator('.badge').allTextContents(), status: await row.getByRole('cell').nth(5).textContent(), details };
        await saveScreenshot(screenshot);
        return shownTx;
      };
      const refundShown = await openTransaction(partlyRefunded.svcTxId, 'transaction-refund');
      const disputeShown = await openTransaction(disputed.svcTxId, 'transaction-dispute');

      // Act 2: Balances, the partner chosen in the picker: by default only the merchants that owe; then every one.
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Balances' }).click();
      await page.getByRole('heading', { name: 'Balances', level: 2 }).waitFor();
      await page.getByRole('combobox', { name: 'Partner', exact: true }).selectOption(partner.partnerId);
      const owingToggle = page.getByRole('checkbox', { name: 'Only merchants that owe' });
      const balances = page.getByRole('table', { name: 'Balances' });
      const balanceRows = () =>
        balances.locator('tbody tr').evaluateAll((rows) => rows.map((row) => Array.from(row.querySelectorAll('td'), (cell: { textContent: string | null }) => cell.textContent)));
      await balances.getByRole('row').filter({ hasText: owes }).waitFor();
      const toggleOnByDefault = await owingToggle.isChecked();
      const owingShown = await balanceRows();
      const owingMarked = await balances.locator('tr.owing').allTextContents();
      /** The exact `owing_since` each row shows, from its <time datetime>. */
      const owingSinceShown = () => balances.locator('tbody tr').evaluateAll((rows) => rows.map((row) => row.querySelector('time')?.getAttribute('datetime') ?? null));
      const owingSinceAttributes = await owingSinceShown();
      const overdueNow = await balances.locator('.badge.overdue').count();
      await owingToggle.uncheck();
      await balances.getByRole('row').filter({ hasText: earns }).waitFor();
      const everyShown = await balanceRows();
      // The admin API's answers for the same moment (the run below settles these balances).
      const owingBalances = (await api!.admin('GET', `/admin/partners/${partner.partnerId}/balances?owing=true`)).body;
      const everyBalance = (await api!.admin('GET', `/admin/partners/${partner.partnerId}/balances?owing=false`)).body;

      // Act 2b: the same balances with the browser's clock 8 days after `owing_since` (the refund's ledger entry is
      // written when the event arrives, so the API cannot make it 8 days old; only the page's clock moves, the
      // service's data is untouched): the merchant is marked as owing for more than 7 days.
      const owedSince: string = owingBalances.items[0]?.owing_since ?? '';
      await page.clock.setFixedTime(Date.parse(owedSince) + 8 * 24 * 60 * 60 * 1000 + 60_000);
      await page.goto(`${origin}/admin/balances?partner_id=${partner.partnerId}`, { waitUntil: 'load' });
      await balances.getByRole('row').filter({ hasText: owes }).getByText('Owing > 7 days').waitFor();
      const laterOwingShown = await balanceRows();
      const laterOverdue = await balances.getByRole('row').filter({ hasText: 'Owing > 7 days' }).locator('td').first().textContent();
      await owingToggle.uncheck();
      await balances.getByRole('row').filter({ hasText: earns }).waitFor();
      await saveScreenshot('balances');
      // Back to the real time (frozen from here on: the rest of the file reads no clock in the page).
      await page.clock.setFixedTime(Date.now());

      // Act 3: a new sale covers what the merchant owes; run settlement in the console and open each batch.
      await transactionIn(api!, payee(owes), { amountMinor: 10_000, currency: 'USD' });
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Settlements' }).click();
      await page.getByLabel('Partner id (empty: every partner)').fill(partner.partnerId);
      await page.getByRole('button', { name: 'Run settlement' }).click();
      await page.getByText('2 batch(es) created.').waitFor();
      const batchTable = page.getByRole('table', { name: 'Settlement batches' });
      const openBatch = async (clientId: string) => {
        const row = batchTable.getByRole('row').filter({ hasText: clientId }).filter({ hasText: 'pending' });
        const batchId = (await row.locator('code').first().textContent()) ?? '';
        await row.getByRole('button', { name: 'Details' }).click();
        const details = page.getByRole('region', { name: `Batch ${batchId}` });
        await details.waitFor();
        const adjustments = await details
          .getByRole('table', { name: 'Adjustments' })
          .locator('tbody tr')
          .evaluateAll((rows) => rows.map((row) => Array.from(row.querySelectorAll('td'), (cell: { textContent: string | null }) => cell.textContent).slice(0, 6)));
        return { batchId, adjustments };
      };
      const owesBatch = await openBatch(owes);
      const earnsBatch = await openBatch(earns);
      await saveScreenshot('settlement-batch');
      // Settled: nothing waits for the merchant that owed, so the default Balances view is empty.
      await page.goto(`${origin}/admin/balances?partner_id=${partner.partnerId}`, { waitUntil: 'load' });
      await page.getByText('No merchant of this partner owes money.').waitFor();

      // Assert: what the page showed is what the admin API answers.
      const [refundTx, disputeTx, saleTx] = await Promise.all([adminTx(partlyRefunded.svcTxId), adminTx(disputed.svcTxId), adminTx(sale.svcTxId)]);
      const batches = (await api!.admin('GET', `/admin/settlements?partner_id=${partner.partnerId}&status=pending`)).body.items as {
        id: string;
        clientId: string;
        adjustments: { svcTxId: string; type: string; gross: number; processorFee: number; platformFee: number; net: number }[];
      }[];
      interface ListedBalance {
        client_id: string;
        currency: string;
        unsettled_net: number;
        waiting_reversals: number;
        owed: number;
        next_payout_estimate: number;
        owing_since: string | null;
      }
      /** A balance's row as the console shows it, `age` the owing age it shows beside `owing_since`. */
      const balanceRow = async (balance: ListedBalance, age = '(less than a day)') => [
        balance.client_id,
        balance.currency,
        await shown(balance.unsettled_net),
        await shown(balance.waiting_reversals),
        balance.owed > 0 ? `Owes ${await shown(balance.owed)}` : await shown(balance.owed),
        balance.owing_since === null ? '—' : `${await shownWhen(balance.owing_since)} ${age}`,
        await shown(balance.next_payout_estimate),
      ];
      const LABELS: Record<string, string> = {
        transaction: 'Sale (settled beside its reversals)',
        refund: 'Refund',
        chargeback: 'Chargeback (dispute)',
        dispute_fee: 'Dispute fee',
        dispute_reinstated: 'Dispute reinstated',
      };
      const adjustmentRows = async (clientId: string) => {
        const batch = batches.find((candidate) => candidate.clientId === clientId);
        return {
          batchId: batch?.id,
          adjustments: await Promise.all(
            (batch?.adjustments ?? []).map(async (adjustment) => [
              `${LABELS[adjustment.type]} ${adjustment.type}`,
              adjustment.svcTxId,
              await shown(adjustment.gross),
              await shown(adjustment.processorFee),
              await shown(adjustment.platformFee),
              await shown(adjustment.net),
            ]),
          ),
        };
      };
      expect({
        paidOut: paidOut.body.status,
        refundTx: { status: refundTx.status, refundedAmount: refundTx.refundedAmount, disputedAmount: refundTx.disputedAmount, disputeStatus: refundTx.disputeStatus },
        disputeTx: { status: disputeTx.status, refundedAmount: disputeTx.refundedAmount, disputedAmount: disputeTx.disputedAmount, disputeStatus: disputeTx.disputeStatus },
        owingApi: owingBalances.items.map((balance: ListedBalance) => [balance.client_id, balance.owed]),
        // Owing since the refund was written (its ledger entry's time); null for the merchant that owes nothing.
        owingSinceApi: Object.fromEntries(
          everyBalance.items.map((balance: ListedBalance) => [
            balance.client_id,
            balance.owing_since === null ? null : Date.parse(balance.owing_since) >= refundSent && Date.parse(balance.owing_since) <= refundDone,
          ]),
        ),
        earnsTypes: batches.find((batch) => batch.clientId === earns)?.adjustments.map((adjustment) => adjustment.type).sort(),
      }).toEqual({
        paidOut: 'sent',
        refundTx: { status: 'succeeded', refundedAmount: 15, disputedAmount: 0, disputeStatus: null },
        disputeTx: { status: 'chargeback', refundedAmount: 0, disputedAmount: 30, disputeStatus: 'needs_response' },
        // A full refund after the payout reverses the payment's whole net: that is what the merchant owes.
        owingApi: [[owes, saleTx.netAmount]],
        owingSinceApi: { [owes]: true, [earns]: null },
        earnsTypes: ['chargeback', 'refund', 'transaction'],
      });
      expect({
        refundShown,
        disputeShown,
        toggleOnByDefault,
        owingShown,
        owingMarked: owingMarked.length,
        owingSinceAttributes,
        overdueNow,
        everyShown,
        laterOwingShown,
        laterOverdue,
        owesBatch,
        earnsBatch,
        problems: browser!.problemsSince(mark),
        outsideRequests: outsideRequests(),
      }).toEqual({
        refundShown: {
          marks: [`refunded ${await shown(refundTx.refundedAmount)}`],
          status: 'succeeded',
          details: expect.objectContaining({ Amount: await shown(refundTx.amount), Refunded: await shown(refundTx.refundedAmount), Disputed: await shown(refundTx.disputedAmount) }),
        },
        disputeShown: {
          marks: [`disputed ${await shown(disputeTx.disputedAmount)} (${disputeTx.disputeStatus})`],
          status: 'chargeback',
          details: expect.objectContaining({
            Refunded: await shown(disputeTx.refundedAmount),
            Disputed: await shown(disputeTx.disputedAmount),
            'Dispute status': disputeTx.disputeStatus,
          }),
        },
        toggleOnByDefault: true,
        owingShown: await Promise.all(owingBalances.items.map((balance: ListedBalance) => balanceRow(balance))),
        owingMarked: 1,
        owingSinceAttributes: owingBalances.items.map((balance: ListedBalance) => balance.owing_since),
        overdueNow: 0,
        everyShown: await Promise.all(everyBalance.items.map((balance: ListedBalance) => balanceRow(balance))),
        laterOwingShown: await Promise.all(owingBalances.items.map((balance: ListedBalance) => balanceRow(balance, '(8 days) Owing > 7 days'))),
        laterOverdue: owes,
        owesBatch: await adjustmentRows(owes),
        earnsBatch: await adjustmentRows(earns),
        problems: { newFailedResponses: [], newPageErrors: [], newConsoleErrors: [] },
        outsideRequests: [],
      });
      // No dispute status without a dispute; the merchant that does not owe is listed only with the toggle off.
      expect({
        refundHasDisputeStatus: 'Dispute status' in refundShown.details,
        earnsWithToggleOn: owingShown.some((row) => row[0] === earns),
        earnsWithToggleOff: everyShown.some((row) => row[0] === earns),
      }).toEqual({ refundHasDisputeStatus: false, earnsWithToggleOn: false, earnsWithToggleOff: true });
      expect(browser!.apiCalls().every((request) => new URL(request.slice(request.indexOf(' ') + 1)).pathname.startsWith('/api/v1/admin/'))).toBe(true);
      expect(requests).toEqual(
        expect.arrayContaining([
          `GET ${origin}/api/v1/admin/partners/${partner.partnerId}/balances?owing=true`,
          `GET ${origin}/api/v1/admin/partners/${partner.partnerId}/balances?owing=false`,
        ]),
      );
    },
    120_000,
  );

  it(
    'returns to sign-in, saying why, when the API refuses the token (401 ADMIN_TOKEN_INVALID)',
    async () => {
      await page.goto(`${origin}/admin/partners`, { waitUntil: 'load' });
      await page.evaluate(() => sessionStorage.setItem('admin-console.token', 'not-a-token'));
      await page.reload({ waitUntil: 'load' });
      const alert = page.getByRole('alert');
      await alert.waitFor();
      expect(await alert.textContent()).toContain('ADMIN_TOKEN_INVALID');
      expect(await page.getByRole('button', { name: 'Sign in' }).isVisible()).toBe(true);
      expect(await page.evaluate(() => sessionStorage.getItem('admin-console.token'))).toBeNull();
    },
    60_000,
  );
});

describe('GET /admin over HTTP', () => {
  const get = (path: string) => fetch(`${origin}${path}`);

  it('serves the app page and its files with their types, nosniff and the Content-Security-Policy', async () => {
    const index = await get('/admin');
    const html = await index.text();
    const script = /src="(\/admin\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    const asset = await get(script ?? '/admin/assets/none.js');
    expect({
      status: index.status,
      type: index.headers.get('content-type'),
      nosniff: index.headers.get('x-content-type-options'),
      csp: index.headers.get('content-security-policy'),
      assetStatus: asset.status,
      assetType: asset.headers.get('content-type'),
      assetCache: asset.headers.get('cache-control'),
    }).toEqual({
      status: 200,
      type: 'text/html; charset=utf-8',
      nosniff: 'nosniff',
      csp: "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: https:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
      assetStatus: 200,
      assetType: 'text/javascript; charset=utf-8',
      assetCache: 'public, max-age=31536000, immutable',
    });
  });

  it('answers an app path with the app page, and a missing file or a path out of the build with 404', async () => {
    const appPath = await get('/admin/api-keys?partner_id=ptr_x');
    const missing = await get('/admin/assets/missing.js');
    const outside = await Promise.all(['/admin/%2e%2e/package.json', '/admin/..%2f..%2fpackage.json', '/admin/%2e%2e%2f%2e%2e%2fpackage.json'].map(get));
    expect({
      appPath: [appPath.status, (await appPath.text()).includes('<div id="root">')],
      missing: [missing.status, await missing.json()],
      outside: await Promise.all(outside.map(async (answer) => [answer.status, ((await answer.json()) as { code: string }).code])),
    }).toEqual({
      appPath: [200, true],
      missing: [404, { error: 'No such file in the admin console', code: 'NOT_FOUND' }],
      outside: [
        [404, 'NOT_FOUND'],
        [404, 'NOT_FOUND'],
        [404, 'NOT_FOUND'],
      ],
    });
  });
});
