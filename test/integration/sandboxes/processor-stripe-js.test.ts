/**
 * The sandbox's Stripe.js stand-in (`/v3/`) in a real browser, as a checkout page uses Stripe.js: headless
 * Chromium (Debian's, driven by playwright-core) opens a small page, served here under the CSP
 * `script-src 'self' <sandbox>; connect-src 'self' <sandbox>; style-src 'self'`, which loads the stand-in from a
 * sandbox of this file, mounts the payment element, submits it and confirms the payment with the publishable key
 * and the intent's client secret. Every page must finish without a console error, a page error or a CSP violation.
 * Needs Debian's Chromium at /usr/bin/chromium; never downloads a browser.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { Page, Request } from 'playwright-core';
import type Stripe from 'stripe';
import type { ProcessorSandbox } from '../../../infra/local/sandbox/processor';
import { type Browser, launchChromium } from '../../support/browser';
import { freePort } from '../../support/ports';
import { deliveryOf, sdk, startReceiver, startSandboxFor, type Receiver } from '../../support/processor-sandbox';

const SECRET_KEY = 'sk_test_stripe_js_0123456789';
const PUBLISHABLE_KEY = 'pk_test_stripe_js_0123456789';
const STEP_TIMEOUT_MS = 15_000;
const TEST_TIMEOUT_MS = 60_000;
const SUBMIT_FIRST = 'elements.submit() must be called before stripe.confirmPayment()';

/**
 * The checkout page's own script (served from the page's origin, as the CSP requires): the payment element, a Pay
 * button that submits then confirms, buttons for the other calls, and each result written to #result.
 */
const CHECKOUT_JS = `
const root = document.getElementById('checkout');
const { publishableKey, clientSecret, redirect, returnUrl } = root.dataset;
const stripe = Stripe(publishableKey);
const elements = stripe.elements({ clientSecret });
const payment = elements.create('payment');
payment.mount('#payment-element');
payment.on('change', (event) => { document.getElementById('change').textContent = JSON.stringify(event); });
const result = document.getElementById('result');
let count = 0;
const show = (value) => { result.textContent = JSON.stringify(value); count += 1; result.dataset.count = String(count); };
const confirmParams = returnUrl ? { return_url: returnUrl } : {};
document.getElementById('pay-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const submitted = await elements.submit();
  if (submitted.error) return show({ step: 'submit', ...submitted });
  show({ step: 'confirm', ...(await stripe.confirmPayment({ elements, redirect, confirmParams })) });
});
document.getElementById('submit-only').addEventListener('click', async () => show({ step: 'submit', ...(await elements.submit()) }));
document.getElementById('confirm-only').addEventListener('click', async () => show({ step: 'confirm', ...(await stripe.confirmPayment({ elements, redirect: 'if_required' })) }));
document.getElementById('retrieve').addEventListener('click', async () => show({ step: 'retrieve', ...(await stripe.retrievePaymentIntent(clientSecret)) }));
`;

interface CheckoutPage {
  page: Page;
  /** The browser's requests to the sandbox: `METHOD path` and the body sent. */
  sandboxRequests: Array<{ call: string; body: string }>;
  problems: string[];
}

let receiver: Receiver;
let sandbox: ProcessorSandbox;
let stripe: Stripe;
let pages: Server;
let pagesOrigin: string;
let browser: Browser | undefined;

beforeAll(async () => {
  receiver = await startReceiver();
  sandbox = await startSandboxFor(receiver, { secretKey: SECRET_KEY, publishableKey: PUBLISHABLE_KEY, webhookSecret: 'whsec_stripe_js' }, []);
  stripe = sdk(sandbox, SECRET_KEY);
  pages = createServer((req, res) => {
    const url = new URL(req.url ?? '/', pagesOrigin);
    if (url.pathname === '/checkout') {
      const csp = `script-src 'self' ${sandbox.url}; connect-src 'self' ${sandbox.url}; style-src 'self'`;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': csp }).end(checkoutHtml(url.searchParams));
    } else if (url.pathname === '/checkout.js') {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(CHECKOUT_JS);
    } else if (url.pathname === '/done') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>Done</title><link rel="icon" href="data:,"><p>Done</p>');
    } else {
      res.writeHead(404).end();
    }
  });
  const port = await freePort();
  await new Promise<void>((resolve) => pages.listen(port, '127.0.0.1', resolve));
  pagesOrigin = `http://127.0.0.1:${port}`;
  browser = await launchChromium({ name: 'processor-sandbox-stripe-js', viewport: { width: 800, height: 900 }, timeoutMs: STEP_TIMEOUT_MS });
  // Before any script of the page (injected by the browser, so outside the page's CSP): every CSP violation.
  await browser.context.addInitScript({
    content: `window.cspViolations = [];
      document.addEventListener('securitypolicyviolation', (event) => window.cspViolations.push(event.violatedDirective + ' ' + event.blockedURI));`,
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => {
    pages.close(() => resolve());
    pages.closeAllConnections();
  });
  await sandbox.close();
  await receiver.close();
});

function checkoutHtml(query: URLSearchParams): string {
  const data = {
    'publishable-key': query.get('pk') ?? PUBLISHABLE_KEY,
    'client-secret': query.get('cs') ?? '',
    redirect: query.get('redirect') ?? 'if_required',
    'return-url': query.get('return_url') ?? '',
  };
  const attributes = Object.entries(data)
    .map(([name, value]) => `data-${name}="${value.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}"`)
    .join(' ');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Sandbox checkout</title>
<link rel="icon" href="data:,">
<script src="${sandbox.url}/v3/"></script>
<script src="/checkout.js" defer></script>
</head>
<body>
<main id="checkout" ${attributes}>
<form id="pay-form"><div id="payment-element"></div><button id="pay" type="submit">Pay</button></form>
<button id="submit-only" type="button">Submit only</button>
<button id="confirm-only" type="button">Confirm without submit</button>
<button id="retrieve" type="button">Retrieve</button>
<output id="change"></output>
<output id="result"></output>
</main>
</body>
</html>`;
}

/** A fresh page on a checkout of `clientSecret`, recording what it sends to the sandbox and what goes wrong. */
async function openCheckout(clientSecret: string, extra: Record<string, string> = {}): Promise<CheckoutPage> {
  if (browser === undefined) throw new Error('the browser did not start');
  const page = await browser.context.newPage();
  page.setDefaultTimeout(STEP_TIMEOUT_MS);
  const checkout: CheckoutPage = { page, sandboxRequests: [], problems: [] };
  page.on('request', (request: Request) => {
    if (request.url().startsWith(`${sandbox.url}/v1/`)) checkout.sandboxRequests.push({ call: `${request.method()} ${new URL(request.url()).pathname}`, body: request.postData() ?? '' });
  });
  page.on('pageerror', (error) => checkout.problems.push(`page error: ${String(error)}`));
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') checkout.problems.push(`console ${message.type()}: ${message.text()} (${message.location().url})`);
  });
  await page.goto(`${pagesOrigin}/checkout?${new URLSearchParams({ cs: clientSecret, ...extra })}`);
  await page.getByLabel('Card number').waitFor();
  return checkout;
}

async function fillCard(page: Page, card: { number: string; expiry?: string; cvc?: string }): Promise<void> {
  await page.getByLabel('Card number').fill(card.number);
  await page.getByLabel('Expiration date (MM / YY)').fill(card.expiry ?? `12 / ${String((new Date().getFullYear() + 2) % 100).padStart(2, '0')}`);
  await page.getByLabel('Security code').fill(card.cvc ?? '123');
}

/** Clicks, then reads the result the page writes for that click. */
async function resultOf(page: Page, click: () => Promise<void>): Promise<Record<string, any>> {
  const before = Number((await page.locator('#result').getAttribute('data-count')) ?? '0');
  await click();
  await page.locator(`#result[data-count="${before + 1}"]`).waitFor({ state: 'attached' });
  return JSON.parse((await page.locator('#result').textContent()) ?? '') as Record<string, any>;
}

/** No console error or warning (but the `allowed` ones), no page error, no CSP violation; then the page is closed. */
async function expectCleanAndClose(checkout: CheckoutPage, allowed: string[] = []): Promise<void> {
  const violations = await checkout.page.evaluate<string[]>('window.cspViolations');
  await checkout.page.close();
  expect({ problems: checkout.problems.filter((problem) => !allowed.includes(problem)), violations }).toEqual({ problems: [], violations: [] });
}

const newIntent = () => stripe.paymentIntents.create({ amount: 4_200, currency: 'usd', metadata: { svc_tx_id: 'tx_stripe_js' } });

describe('the Stripe.js stand-in in a browser, under the checkout page\'s CSP', () => {
  it(
    'lets no page use the secret key: an Authorization header fails the preflight, and key=sk_… is refused',
    async () => {
      const intent = await newIntent();
      const checkout = await openCheckout(intent.client_secret ?? '');

      const outcome = await checkout.page.evaluate<{ viaHeader: string; viaKey: string }>(`(async () => {
        const create = (headers, body) => fetch(${JSON.stringify(sandbox.url)} + '/v1/payment_intents', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body });
        const outcome = (call) => call.then((response) => 'answered ' + response.status, (error) => error.name);
        return {
          viaHeader: await outcome(create({ authorization: 'Bearer ${SECRET_KEY}' }, 'amount=100&currency=usd')),
          viaKey: await outcome(create({}, 'amount=100&currency=usd&key=${SECRET_KEY}')),
        };
      })()`);
      const violations = await checkout.page.evaluate<string[]>('window.cspViolations');
      await checkout.page.close();

      expect(outcome).toEqual({ viaHeader: 'TypeError', viaKey: 'answered 401' });
      // The browser reports exactly the blocked request (CORS, then the failed load) and the refusal of key=sk_….
      const reported = checkout.problems.map((problem) =>
        /^console error: Access to fetch at '[^']*\/v1\/payment_intents' from origin '[^']*' has been blocked by CORS policy/.test(problem)
          ? 'blocked by CORS'
          : /^console error: Failed to load resource: net::ERR_FAILED \([^)]*\/v1\/payment_intents\)$/.test(problem)
            ? 'failed load'
            : /^console error: Failed to load resource: the server responded with a status of 401 \(Unauthorized\) \([^)]*\/v1\/payment_intents\)$/.test(problem)
              ? 'refused 401'
              : problem,
      );
      expect({ reported: reported.sort(), violations }).toEqual({ reported: ['blocked by CORS', 'failed load', 'refused 401'], violations: [] });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'renders the payment element with labelled inputs and the test cards, and refuses a secret key',
    async () => {
      const intent = await newIntent();
      const checkout = await openCheckout(intent.client_secret ?? '');
      const { page } = checkout;

      await expect(page.getByLabel('Card number').isVisible()).resolves.toBe(true);
      await expect(page.getByLabel('Expiration date (MM / YY)').isVisible()).resolves.toBe(true);
      await expect(page.getByLabel('Security code').isVisible()).resolves.toBe(true);
      const hint = page.locator('#payment-element').getByText('4242 4242 4242 4242');
      await expect(hint.textContent()).resolves.toMatch(/4242 4242 4242 4242 pays, 4000 0000 0000 0002 is declined/);
      const secretKeyRefusal = await page.evaluate<{ name: string; message: string } | undefined>(`(() => {
        try {
          Stripe('sk_test_not_for_browsers');
          return undefined;
        } catch (error) {
          return { name: error.name, message: error.message };
        }
      })()`);

      expect(secretKeyRefusal).toEqual({ name: 'IntegrationError', message: expect.stringContaining('publishable key') });
      expect(checkout.sandboxRequests).toEqual([]);
      await expectCleanAndClose(checkout);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'refuses to confirm before elements.submit(), or after the fields changed since, with an integration_error and no request',
    async () => {
      // Arrange: a complete test card, never submitted
      const intent = await newIntent();
      const checkout = await openCheckout(intent.client_secret ?? '');
      const { page } = checkout;
      await fillCard(page, { number: '4242 4242 4242 4242' });

      // Act: confirm without submit; then submit, change the security code and confirm
      const unsubmitted = await resultOf(page, () => page.locator('#confirm-only').click());
      const submitted = await resultOf(page, () => page.locator('#submit-only').click());
      await page.getByLabel('Security code').fill('456');
      const changedSince = await resultOf(page, () => page.locator('#confirm-only').click());

      // Assert
      expect(unsubmitted).toEqual({ step: 'confirm', error: { type: 'integration_error', message: expect.stringContaining(SUBMIT_FIRST) } });
      expect(submitted).toEqual({ step: 'submit', selectedPaymentMethod: 'card' });
      expect(changedSince).toEqual(unsubmitted);
      expect(checkout.sandboxRequests).toEqual([]);
      expect(sandbox.intents().find((each) => each.id === intent.id)).toMatchObject({ status: 'requires_payment_method', latest_charge: null });
      await expectCleanAndClose(checkout);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'shows a validation_error under each wrong field (checksum, a card that is not a test card, expiry, security code) and sends nothing',
    async () => {
      const intent = await newIntent();
      const checkout = await openCheckout(intent.client_secret ?? '');
      const { page } = checkout;

      await fillCard(page, { number: '4242 4242 4242 4241', expiry: '01 / 20', cvc: '12' });
      const invalid = await resultOf(page, () => page.locator('#pay').click());
      const shownFirst = await page.locator('#payment-element').innerText();
      await fillCard(page, { number: '4111 1111 1111 1111' });
      const notATestCard = await resultOf(page, () => page.locator('#pay').click());

      expect(invalid).toEqual({ step: 'submit', error: { type: 'validation_error', code: 'invalid_number', message: 'Your card number is invalid.' } });
      expect(shownFirst).toContain('Your card number is invalid.');
      expect(shownFirst).toContain("Your card's expiration year is in the past.");
      expect(shownFirst).toContain("Your card's security code is incomplete.");
      expect(notATestCard).toEqual({ step: 'submit', error: { type: 'validation_error', code: 'invalid_number', message: expect.stringMatching(/only test cards: use 4242 4242 4242 4242/) } });
      await expect(page.getByLabel('Card number').getAttribute('aria-invalid')).resolves.toBe('true');
      const element = page.locator('#payment-element');
      await expect(element.getByText(notATestCard.error.message as string).isVisible()).resolves.toBe(true);
      await expect(element.getByText("Your card's expiration year is in the past.").count()).resolves.toBe(0);
      expect(checkout.sandboxRequests).toEqual([]);
      await expectCleanAndClose(checkout);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'pays with 4242 4242 4242 4242: the paymentIntent succeeded (no metadata), the sandbox emits its event, no card number leaves the page',
    async () => {
      const intent = await newIntent();
      const checkout = await openCheckout(intent.client_secret ?? '');
      const { page } = checkout;

      await fillCard(page, { number: '4242 4242 4242 4242' });
      const change = JSON.parse((await page.locator('#change').textContent()) ?? '') as Record<string, unknown>;
      const paid = await resultOf(page, () => page.locator('#pay').click());
      const retrieved = await resultOf(page, () => page.locator('#retrieve').click());

      expect(change).toMatchObject({ elementType: 'payment', complete: true, empty: false });
      expect(paid).toEqual({ step: 'confirm', paymentIntent: expect.objectContaining({ id: intent.id, object: 'payment_intent', status: 'succeeded', amount: 4_200 }) });
      expect(paid.paymentIntent).not.toHaveProperty('metadata');
      expect(retrieved).toEqual({ step: 'retrieve', paymentIntent: expect.objectContaining({ id: intent.id, status: 'succeeded' }) });
      expect(checkout.sandboxRequests.map((request) => request.call)).toEqual([`POST /v1/payment_intents/${intent.id}/confirm`, `GET /v1/payment_intents/${intent.id}`]);
      expect(Object.fromEntries(new URLSearchParams(checkout.sandboxRequests[0]?.body))).toEqual({
        payment_method: 'pm_card_visa',
        client_secret: intent.client_secret,
        key: PUBLISHABLE_KEY,
      });
      expect(sandbox.intents().find((each) => each.id === intent.id)).toMatchObject({ status: 'succeeded', amount_received: 4_200 });
      const event = await deliveryOf(receiver, 'payment_intent.succeeded', intent.id);
      expect(JSON.parse(event.rawBody)).toMatchObject({ data: { object: { metadata: { svc_tx_id: 'tx_stripe_js' } } } });
      await expectCleanAndClose(checkout);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'is declined with 4000 0000 0000 0002 (card_error card_declined, as Stripe.js answers), then pays with 4242 after a new submit',
    async () => {
      const intent = await newIntent();
      const checkout = await openCheckout(intent.client_secret ?? '');
      const { page } = checkout;

      await fillCard(page, { number: '4000 0000 0000 0002' });
      const declined = await resultOf(page, () => page.locator('#pay').click());
      const retriedWithoutSubmit = await resultOf(page, () => page.locator('#confirm-only').click());
      await fillCard(page, { number: '4242 4242 4242 4242' });
      const paid = await resultOf(page, () => page.locator('#pay').click());

      expect(declined).toEqual({
        step: 'confirm',
        error: expect.objectContaining({
          type: 'card_error',
          code: 'card_declined',
          decline_code: 'generic_decline',
          message: 'Your card was declined.',
          payment_intent: expect.objectContaining({ id: intent.id, status: 'requires_payment_method' }),
        }),
      });
      expect(JSON.stringify(declined)).not.toContain('metadata');
      expect(retriedWithoutSubmit).toEqual({ step: 'confirm', error: { type: 'integration_error', message: expect.stringContaining(SUBMIT_FIRST) } });
      expect(paid).toMatchObject({ step: 'confirm', paymentIntent: { id: intent.id, status: 'succeeded' } });
      await deliveryOf(receiver, 'payment_intent.payment_failed', intent.id);
      // Chromium logs the decline's 402 as a failed resource load (any page confirming a declined card gets it):
      // the network's log line, allowed for that one request only.
      const declineLogged = `console error: Failed to load resource: the server responded with a status of 402 (Payment Required) (${sandbox.url}/v1/payment_intents/${intent.id}/confirm)`;
      await expectCleanAndClose(checkout, [declineLogged]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "with redirect: 'always', goes to return_url with the intent and the outcome, as Stripe does",
    async () => {
      const intent = await newIntent();
      const checkout = await openCheckout(intent.client_secret ?? '', { redirect: 'always', return_url: `${pagesOrigin}/done?order=42` });
      const { page } = checkout;

      await fillCard(page, { number: '4242 4242 4242 4242' });
      await page.locator('#pay').click();
      await page.waitForURL(/\/done\?/);

      const returned = new URL(page.url());
      expect(Object.fromEntries(returned.searchParams)).toEqual({
        order: '42',
        payment_intent: intent.id,
        payment_intent_client_secret: intent.client_secret,
        redirect_status: 'succeeded',
      });
      expect(sandbox.intents().find((each) => each.id === intent.id)?.status).toBe('succeeded');
      await expectCleanAndClose(checkout);
    },
    TEST_TIMEOUT_MS,
  );
});
