/**
 * The admin console's webhook deliveries and its pager in headless Chromium, on a service of this file's
 * own that runs the whole delivery pipeline (`delivery-world.ts`: a sandbox processor, the stream relay, the local
 * queue, the real consumer; `WEBHOOK_RETRY_BASE_MS` small, so a failing delivery's three attempts take about 2 s).
 *
 * A partner, its webhook endpoint (a local {@link WebhookReceiver}) and its API key are made in the console; a real
 * payment with that key (checkout, then `pm_card_visa` at the sandbox) reaches the receiver signed, and the console
 * shows the delivery delivered. Then the receiver answers 500: the console shows the delivery's attempts and last
 * error, filters by status, and resends it once the receiver is fixed. Last, the partners list pages forward and
 * back through more partners than one page holds. Every step: no request leaves 127.0.0.1, no page or console error,
 * no answer of 400 or more. Screenshots as in admin-console-browser.test.ts (`console-deliveries.png`,
 * `console-resend.png`).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { Locator, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import type { PartnerCredentials, TestApi } from '../../support/api';
import { buildConsole, type ConsoleBrowser, openConsoleBrowser, signIn } from '../../support/console-browser';
import { useDeliveryWorld } from '../../support/delivery-world';
import { type ReceivedWebhook, WebhookReceiver } from '../../support/webhook-receiver';

let browser: ConsoleBrowser | undefined;
let receiver: WebhookReceiver | undefined;

// Registered before the world's own teardown (jest runs afterAll hooks in the order they are declared): the
// browser's keep-alive connections and its polling would otherwise hold the API's graceful close open.
afterAll(async () => {
  await browser?.close();
  await receiver?.close();
});

// Sets the service's environment (its own table, queue and sandbox): before anything loads lib/config.ts.
const world = await useDeliveryWorld('console');
const { stripe } = world;

let api: TestApi;
let page: Page;

beforeAll(async () => {
  api = world.api();
  await buildConsole();
  receiver = await WebhookReceiver.start();
  browser = await openConsoleBrowser(api, 'admin-console-deliveries');
  page = browser.page;
  await signIn(browser, api.adminToken);
}, 120_000);


// ---------------------------------------------------------------------------------------------------------
// Helpers

const section = (title: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: title }).click();

/** A payment of `amount` USD as a partner's backend and its buyer make it: checkout with the key, `pm_card_visa` at the processor. */
async function pay(credentials: Pick<PartnerCredentials, 'partnerId' | 'apiKey' | 'hmacSecret'>, clientId: string, amount: number): Promise<string> {
  const checkout = await api.signed(credentials, '/transactions/checkout-intent', {
    partner_id: credentials.partnerId,
    client_id: clientId,
    amount,
    currency: 'USD',
    email: 'buyer@example.com',
    partner_reference: `order-${randomUUID()}`,
  });
  if (checkout.status !== 201) throw new Error(`checkout failed: ${JSON.stringify(checkout.body)}`);
  await stripe.paymentIntents.confirm(checkout.body.processor_payment_intent_id as string, { payment_method: 'pm_card_visa' });
  return checkout.body.svc_tx_id as string;
}

const deliveriesTable = () => page.getByRole('table', { name: 'Webhook deliveries' });
/** Scrolls the deliveries to the top of the window (for a screenshot: the endpoints above are not its subject). */
const scrollToDeliveries = () => page.getByRole('heading', { name: 'Deliveries', level: 3 }).evaluate((heading) => heading.scrollIntoView({ block: 'start' }));
const deliveryRow = (text: string) => deliveriesTable().getByRole('row').filter({ hasText: text });

/** A delivery's row as the console shows it (all but its local creation time and its button). */
async function shownDelivery(row: Locator) {
  const [id, event, svcTxId, endpoint, status, attempts, lastHttpStatus, lastError] = await row.getByRole('cell').allTextContents();
  return { id, event, svcTxId, endpoint, status, attempts, lastHttpStatus, lastError };
}

/** The transactions of the deliveries the table shows, top to bottom. */
const shownTransactions = () => deliveriesTable().locator('tbody tr td:nth-child(3)').allTextContents();

/** The partner's deliveries as the admin API lists them (newest first). */
const listedDeliveries = async (partnerId: string): Promise<Array<Record<string, any>>> =>
  (await api.admin('GET', `/admin/partners/${partnerId}/webhook-deliveries?limit=200`)).body.items;

const bodyOf = (request: ReceivedWebhook) => JSON.parse(request.body) as Record<string, unknown>;

/** What every step checks: nothing outside, no error, every call the page made went to the admin API. */
function pageBehaviour(since: ReturnType<ConsoleBrowser['mark']>) {
  return {
    ...browser!.problemsSince(since),
    outsideRequests: browser!.outsideRequests(),
    nonAdminApiCalls: browser!.apiCalls().filter((request) => !new URL(request.slice(request.indexOf(' ') + 1)).pathname.startsWith('/api/v1/admin/')),
  };
}
const CLEAN = { newFailedResponses: [], newPageErrors: [], newConsoleErrors: [], outsideRequests: [], nonAdminApiCalls: [] };

// ---------------------------------------------------------------------------------------------------------

describe("a partner made in the console: a real payment's webhook, delivered and failed, in its deliveries", () => {
  let partnerId: string;
  let credentials: Pick<PartnerCredentials, 'partnerId' | 'apiKey' | 'hmacSecret'>;
  let clientId: string;
  let endpointId: string;
  let signingSecret: string;
  let firstPayment: string;

  it(
    'shows the delivery of a payment made with the key it issued: transaction_succeeded to its endpoint, succeeded on attempt 1, no error',
    async () => {
      // Arrange: the partner (KYC approved, active), its API key (read from the page, shown once) and its endpoint.
      const mark = browser!.mark();
      const name = `Deliveries partner ${randomUUID().slice(0, 8)}`;
      const createForm = page.getByRole('form', { name: 'Create a partner' });
      await createForm.getByLabel('Name').fill(name);
      await createForm.getByLabel('Service fee (%)').fill('1.5');
      await createForm.getByLabel('KYC status').selectOption('approved');
      await createForm.getByRole('button', { name: 'Create partner' }).click();
      const partnerRow = page.getByRole('table', { name: 'Partners' }).getByRole('row').filter({ hasText: name });
      await partnerRow.waitFor();
      partnerId = (await partnerRow.locator('code').first().textContent()) ?? '';

      await partnerRow.getByRole('button', { name: 'API keys' }).click();
      await page.getByRole('button', { name: 'Issue an API key' }).click();
      const issued = page.getByRole('region', { name: 'New API key' });
      await issued.waitFor();
      const apiKey = (await issued.getByLabel('API key (x-api-key)').textContent()) ?? '';
      const hmacSecret = (await issued.getByLabel('HMAC secret (signs x-svc-hmac)').textContent()) ?? '';
      await issued.getByRole('button', { name: 'I have copied them' }).click();
      credentials = { partnerId, apiKey, hmacSecret };

      await section('Webhooks');
      await page.getByRole('combobox', { name: 'Partner' }).selectOption(partnerId);
      const endpointForm = page.getByRole('form', { name: 'Add a webhook endpoint' });
      await endpointForm.getByLabel('Name').fill('Orders');
      await endpointForm.getByLabel('URL').fill(receiver!.url('/orders'));
      expect(await endpointForm.getByLabel('transaction_succeeded').isChecked()).toBe(true);
      await endpointForm.getByRole('button', { name: 'Add endpoint' }).click();
      const created = page.getByRole('region', { name: 'New webhook endpoint' });
      signingSecret = (await created.getByLabel('Signing secret').textContent()) ?? '';
      endpointId = (await created.getByRole('heading').locator('code').textContent()) ?? '';
      await created.getByRole('button', { name: 'I have copied it' }).click();
      await page.getByText('No deliveries.').waitFor();

      // Act: the partner's backend registers a merchant and takes a payment with the key; the buyer pays by card.
      clientId = await api.createClient(credentials);
      firstPayment = await pay(credentials, clientId, 25);
      await receiver!.waitForRequests(1);
      await page.getByRole('button', { name: 'Refresh' }).click();
      const row = deliveryRow(firstPayment);
      await row.getByRole('cell', { name: 'succeeded', exact: true }).waitFor();

      // Assert: the partner's webhook arrived signed with the endpoint's secret, and the console shows its delivery.
      const [webhook] = receiver!.requests as [ReceivedWebhook];
      const partner = (await api.admin('GET', `/admin/partners/${partnerId}`)).body;
      const [listed] = await listedDeliveries(partnerId);
      expect({
        partner: { status: partner.status, kyc_status: partner.kyc_status },
        webhook: { path: webhook.path, body: bodyOf(webhook), verified: new Webhook(signingSecret).verify(webhook.body, webhook.headers as Record<string, string>) },
        shown: await shownDelivery(row),
        listed: { id: listed?.id, event_id: listed?.event_id, endpoint_id: listed?.endpoint_id },
        ...pageBehaviour(mark),
      }).toEqual({
        partner: { status: 'active', kyc_status: 'approved' },
        webhook: { path: '/orders', body: expect.objectContaining({ event: 'transaction_succeeded', svc_tx_id: firstPayment, status: 'succeeded' }), verified: bodyOf(webhook) },
        shown: { id: listed?.id, event: 'transaction_succeeded', svcTxId: firstPayment, endpoint: 'Orders', status: 'succeeded', attempts: '1', lastHttpStatus: '200', lastError: '—' },
        listed: { id: expect.stringMatching(/^dlv_/), event_id: webhook.headers['webhook-id'], endpoint_id: endpointId },
        ...CLEAN,
      });
    },
    120_000,
  );

  it(
    "shows a failing endpoint's delivery with its 3 attempts and last error, filters by status, and resends it once the endpoint is fixed",
    async () => {
      // Arrange: the endpoint answers 500 to each of the next delivery's three attempts.
      const mark = browser!.mark();
      receiver!.answer({ status: 500 }, { status: 500 }, { status: 500 });

      // Act: another payment; the console follows its delivery to failed (it reads again while one is pending).
      const secondPayment = await pay(credentials, clientId, 7.5);
      await receiver!.waitForRequests(2);
      await page.getByRole('button', { name: 'Refresh' }).click();
      const failedRow = deliveryRow(secondPayment);
      await failedRow.getByRole('cell', { name: 'failed', exact: true }).waitFor();
      const failedShown = await shownDelivery(failedRow);
      await scrollToDeliveries();
      await browser!.saveScreenshot('deliveries');
      const bothShown = await shownTransactions();

      // Filter by each status the API has.
      const statusFilter = page.getByRole('combobox', { name: 'Status' });
      await statusFilter.selectOption('failed');
      await deliveryRow(firstPayment).waitFor({ state: 'detached' });
      await deliveryRow(secondPayment).waitFor();
      const failedOnly = await shownTransactions();
      await statusFilter.selectOption('succeeded');
      await deliveryRow(secondPayment).waitFor({ state: 'detached' });
      await deliveryRow(firstPayment).waitFor();
      const succeededOnly = await shownTransactions();
      await statusFilter.selectOption('pending');
      await page.getByText('No pending deliveries.').waitFor();

      // The endpoint is fixed (the receiver answers 200 from now on): resend the failed delivery from the failed filter.
      await statusFilter.selectOption('failed');
      await failedRow.waitFor();
      await failedRow.getByRole('button', { name: 'Resend' }).click();
      const notice = page.getByRole('status').filter({ hasText: 'Resent as a new delivery' });
      const resentId = (await notice.locator('code').first().textContent()) ?? '';
      const resentRow = deliveryRow(resentId);
      const failedById = deliveryRow(failedShown.id ?? 'the failed delivery');
      await resentRow.getByRole('cell', { name: 'succeeded', exact: true }).waitFor();
      await receiver!.waitForRequests(5);
      await scrollToDeliveries();
      await browser!.saveScreenshot('resend');

      // Assert: what the console showed, what the receiver got, and what the admin API holds.
      const attempts = receiver!.requests.slice(1, 4);
      const resentRequest = receiver!.requests[4] as ReceivedWebhook;
      const listed = await listedDeliveries(partnerId);
      const failed = listed.find((delivery) => delivery.svc_tx_id === secondPayment && delivery.status === 'failed');
      expect({
        failedShown,
        bothShown,
        failedOnly,
        succeededOnly,
        filterAfterResend: await statusFilter.inputValue(),
        resentShown: await shownDelivery(resentRow),
        failedStillShown: await shownDelivery(failedById),
        shownAfterResend: await shownTransactions(),
        receiver: {
          requests: receiver!.requests.length,
          attempts: attempts.map((request) => [request.path, bodyOf(request).svc_tx_id, request.headers['webhook-id']]),
          resent: [resentRequest.path, resentRequest.body, resentRequest.headers['webhook-id'], new Webhook(signingSecret).verify(resentRequest.body, resentRequest.headers as Record<string, string>)],
        },
        listed: listed.map((delivery) => [delivery.id, delivery.svc_tx_id, delivery.status, delivery.attempts]),
        ...pageBehaviour(mark),
      }).toEqual({
        failedShown: { id: failed?.id, event: 'transaction_succeeded', svcTxId: secondPayment, endpoint: 'Orders', status: 'failed', attempts: '3', lastHttpStatus: '500', lastError: 'HTTP 500: not a 2xx answer' },
        bothShown: [secondPayment, firstPayment],
        failedOnly: [secondPayment],
        succeededOnly: [firstPayment],
        filterAfterResend: '',
        resentShown: { id: resentId, event: 'transaction_succeeded', svcTxId: secondPayment, endpoint: 'Orders', status: 'succeeded', attempts: '1', lastHttpStatus: '200', lastError: '—' },
        failedStillShown: failedShown,
        shownAfterResend: [secondPayment, secondPayment, firstPayment],
        receiver: {
          requests: 5,
          attempts: Array.from({ length: 3 }, () => ['/orders', secondPayment, failed?.event_id]),
          resent: ['/orders', attempts[0]?.body, failed?.event_id, bodyOf(resentRequest)],
        },
        listed: [
          [resentId, secondPayment, 'succeeded', 1],
          [failed?.id, secondPayment, 'failed', 3],
          [expect.any(String), firstPayment, 'succeeded', 1],
        ],
        ...CLEAN,
      });
      expect(browser!.requests).toEqual(expect.arrayContaining([`POST ${browser!.origin}/api/v1/admin/webhook-deliveries/${failed?.id}/resend`]));
    },
    120_000,
  );
});

describe('the pager', () => {
  it(
    'pages through more partners than one page holds: Next shows the next page (none repeated), Previous goes back, the last page has no Next',
    async () => {
      // Arrange: more than two pages of partners (the console asks for the API's default page of 50), quickly.
      const mark = browser!.mark();
      const allPartners = async () => {
        const ids: string[] = [];
        for (let cursor: string | null = null, first = true; first || cursor !== null; first = false) {
          const listed = await api.admin('GET', `/admin/partners?limit=200${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
          ids.push(...listed.body.items.map((partner: { partner_id: string }) => partner.partner_id));
          cursor = listed.body.next_cursor;
        }
        return ids;
      };
      const missing = 2 * 50 + 7 - (await allPartners()).length;
      for (let made = 0; made < missing; made += 10) {
        await Promise.all(
          Array.from({ length: Math.min(10, missing - made) }, (_, i) =>
            api.admin('POST', '/admin/partners', { name: `Paged partner ${made + i} ${randomUUID().slice(0, 8)}`, service_fee_percentage: 1 }),
          ),
        );
      }
      const expected = await allPartners();
      const apiPage = async (cursor?: string) => (await api.admin('GET', `/admin/partners${cursor === undefined ? '' : `?cursor=${encodeURIComponent(cursor)}`}`)).body;
      const apiFirst = await apiPage();
      const apiSecond = await apiPage(apiFirst.next_cursor);
      const apiThird = await apiPage(apiSecond.next_cursor);

      // Act: the partners list, then Next, Next, Previous.
      const table = page.getByRole('table', { name: 'Partners' });
      const shownIds = () => table.locator('tbody tr td:nth-child(2) code').allTextContents();
      const next = page.getByRole('button', { name: 'Next' });
      const previous = page.getByRole('button', { name: 'Previous' });
      const pager = async (pageNumber: number) => {
        await page.getByText(`Page ${pageNumber}`, { exact: true }).waitFor();
        return { ids: await shownIds(), previous: await previous.isEnabled(), next: await next.isEnabled() };
      };
      await page.goto(`${browser!.origin}/admin/partners`, { waitUntil: 'load' });
      const first = await pager(1);
      await next.click();
      const second = await pager(2);
      await next.click();
      const third = await pager(3);
      await previous.click();
      const secondAgain = await pager(2);
      await previous.click();
      const firstAgain = await pager(1);

      // Assert: the console's pages are the API's, together every partner once.
      const shown = [...first.ids, ...second.ids, ...third.ids];
      expect({
        pageSizes: [first.ids.length, second.ids.length, third.ids.length],
        first,
        second,
        third,
        secondAgain,
        firstAgain,
        repeated: shown.filter((id, index) => shown.indexOf(id) !== index),
        everyPartnerOnce: [...shown].sort(),
        ...pageBehaviour(mark),
      }).toEqual({
        pageSizes: [50, 50, expected.length - 100],
        first: { ids: apiFirst.items.map((partner: { partner_id: string }) => partner.partner_id), previous: false, next: true },
        second: { ids: apiSecond.items.map((partner: { partner_id: string }) => partner.partner_id), previous: true, next: true },
        third: { ids: apiThird.items.map((partner: { partner_id: string }) => partner.partner_id), previous: true, next: false },
        secondAgain: second,
        firstAgain: first,
        repeated: [],
        everyPartnerOnce: [...expected].sort(),
        ...CLEAN,
      });
      expect(apiThird.next_cursor).toBeNull();
    },
    120_000,
  );
});
