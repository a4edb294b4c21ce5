// @ts-check
/**
 * The checkout page's script: the spec's frontend rules, in order.
 *
 * 1. The buyer picks a product; the partner backend makes the order (it sets the price) and the checkout intent,
 *    and gives this page only the intent's `client_secret`, the processor's publishable key and `svc_tx_id`.
 * 2. The processor's library is initialised with the publishable key and the payment element is given the
 *    `client_secret`; the card goes from the element to the processor, never to the partner or the service.
 * 3. On Pay: the element's submit step (`elements.submit()`, which checks the fields), then `confirmPayment`.
 * 4. Whatever the library's callback says, the outcome shown is the payment service's: the page asks the partner
 *    backend (`GET payments/{svc_tx_id}`), which reads the service, until the payment leaves `pending`.
 *
 * Paths are relative, so the page works wherever the backend is mounted (`/checkout`, or `/sandbox/checkout`).
 */

/** How long the page waits for the service to hear the processor's outcome, and how often it asks. */
const RECONCILE_TIMEOUT_MS = 20_000;
const RECONCILE_EVERY_MS = 500;

/**
 * The statuses that end the wait. After a declined card, any move out of `pending`. After the processor accepted
 * the card, `failed` does not end it: it may be an earlier card's decline, which the service has already heard of,
 * and a failed payment can still succeed (decisions.md: failed → succeeded).
 */
const AFTER_DECLINE = ['succeeded', 'failed', 'abandoned', 'refunded', 'chargeback'];
const AFTER_ACCEPTED = ['succeeded', 'abandoned', 'refunded', 'chargeback'];

/** @typedef {{ sku: string, name: string, amount: number, currency: string }} Product */
/** @typedef {{ partner_reference: string, svc_tx_id: string, client_secret: string, processor_publishable_key: string }} Checkout */
/** @typedef {{ partner_reference: string, svc_tx_id: string, status: string }} Payment */

/** @param {string} id */
function element(id) {
  const found = document.getElementById(id);
  if (found === null) throw new Error(`#${id} is missing from the page`);
  return found;
}

/**
 * @param {number} amount
 * @param {string} currency
 */
const money = (amount, currency) => new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(amount);

const sleep = (/** @type {number} */ ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A call to the partner backend; its error message when it refuses.
 * @param {'GET' | 'POST'} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<any>}
 */
async function backend(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(typeof answer.error === 'string' ? answer.error : `The shop answered ${response.status}`);
  return answer;
}

/** @param {string} text */
function showMessage(text) {
  element('message').textContent = text;
}

/**
 * Shows what the service says of the payment.
 * @param {Payment} payment
 * @param {string} text
 */
function showResult(payment, text) {
  const result = element('result');
  result.hidden = false;
  result.dataset.status = payment.status;
  element('result-text').textContent = text;
  element('result-order').textContent = payment.partner_reference;
  element('svc-tx-id').textContent = payment.svc_tx_id;
  element('result-status').textContent = payment.status;
}

/**
 * Asks the backend (which reads the service) until the payment reaches one of `ending`, or the wait is over.
 * @param {string} svcTxId
 * @param {string[]} ending
 * @returns {Promise<{ payment: Payment, timedOut: boolean }>}
 */
async function reconcile(svcTxId, ending) {
  const deadline = Date.now() + RECONCILE_TIMEOUT_MS;
  for (;;) {
    /** @type {Payment} */
    const payment = await backend('GET', `payments/${encodeURIComponent(svcTxId)}`);
    if (ending.includes(payment.status)) return { payment, timedOut: false };
    if (Date.now() >= deadline) return { payment, timedOut: true };
    await sleep(RECONCILE_EVERY_MS);
  }
}

/**
 * @param {Payment} payment
 * @param {boolean} timedOut
 */
function describe(payment, timedOut) {
  if (timedOut) return 'The payment is still being processed. This page shows what the payment service knows; look again in a moment.';
  switch (payment.status) {
    case 'succeeded':
      return 'Paid. The payment service confirms the payment succeeded.';
    case 'failed':
      return 'The payment failed. Try another card.';
    default:
      return `The payment service reports: ${payment.status}.`;
  }
}

/**
 * Starts paying `product`: the order and the checkout intent from the backend, then the payment element.
 * @param {Product} product
 */
async function startPayment(product) {
  /** @type {{ partner_reference: string, name: string, amount: number, currency: string }} */
  const order = await backend('POST', 'orders', { sku: product.sku });
  /** @type {Checkout} */
  const checkout = await backend('POST', 'checkout', { partner_reference: order.partner_reference });

  // @ts-ignore: Stripe is the processor library's global (Stripe.js, or the sandbox's stand-in)
  const stripe = Stripe(checkout.processor_publishable_key);
  const elements = stripe.elements({ clientSecret: checkout.client_secret });
  const paymentElement = elements.create('payment');
  element('payment-element').replaceChildren();
  paymentElement.mount('#payment-element');

  element('shop').hidden = true;
  const form = /** @type {HTMLFormElement} */ (element('payment-form'));
  form.hidden = false;
  element('order-summary').textContent = `Order ${order.partner_reference}: ${order.name}, ${money(order.amount, order.currency)}`;
  const pay = /** @type {HTMLButtonElement} */ (element('pay'));
  pay.textContent = `Pay ${money(order.amount, order.currency)}`;

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    pay.disabled = true;
    showMessage('');
    confirm(stripe, elements, checkout)
      .catch((/** @type {unknown} */ error) => showMessage(error instanceof Error ? error.message : String(error)))
      .finally(() => {
        pay.disabled = false;
      });
  });
}

/**
 * Submit step, confirmation, then the service's word on the outcome.
 * @param {any} stripe
 * @param {any} elements
 * @param {Checkout} checkout
 */
async function confirm(stripe, elements, checkout) {
  // The element's submit step first: it checks the card fields before anything is sent.
  const submitted = await elements.submit();
  if (submitted.error !== undefined) {
    showMessage(submitted.error.message);
    return;
  }
  const { error } = await stripe.confirmPayment({ elements, clientSecret: checkout.client_secret, redirect: 'if_required' });
  // A card the processor refused was still an attempt the service hears of: reconcile it too. Any other error
  // (a network failure, a page fault) sent nothing to pay: say so and let the buyer try again.
  if (error !== undefined && error.type !== 'card_error') {
    showMessage(error.message ?? 'The payment could not be sent; try again.');
    return;
  }
  if (error !== undefined) showMessage(error.message ?? 'Your card was declined.');
  // Never only the callback: the outcome shown is the service's.
  element('result').hidden = false;
  element('result-text').textContent = 'Checking the payment with the payment service…';
  const { payment, timedOut } = await reconcile(checkout.svc_tx_id, error === undefined ? AFTER_ACCEPTED : AFTER_DECLINE);
  showResult(payment, describe(payment, timedOut));
  if (payment.status === 'succeeded') element('payment-form').hidden = true;
}

async function main() {
  /** @type {{ items: Product[] }} */
  const { items } = await backend('GET', 'products');
  const list = element('products');
  for (const product of items) {
    const row = document.createElement('li');
    const label = document.createElement('span');
    label.textContent = `${product.name}, ${money(product.amount, product.currency)}`;
    const buy = document.createElement('button');
    buy.type = 'button';
    buy.textContent = 'Buy';
    buy.setAttribute('aria-label', `Buy ${product.name}`);
    buy.addEventListener('click', () => {
      buy.disabled = true;
      element('shop-status').textContent = 'Preparing the payment…';
      startPayment(product).catch((/** @type {unknown} */ error) => {
        buy.disabled = false;
        element('shop-status').textContent = error instanceof Error ? error.message : String(error);
      });
    });
    row.append(label, buy);
    list.append(row);
  }
  element('shop-status').textContent = items.length === 0 ? 'Nothing for sale.' : '';
}

main().catch((/** @type {unknown} */ error) => {
  element('shop-status').textContent = error instanceof Error ? error.message : String(error);
});
