// @ts-check
/**
 * The processor sandbox's stand-in for Stripe.js, served by the sandbox at `<sandbox>/v3/` as Stripe serves
 * js.stripe.com/v3/. A checkout page loads it with `<script src="<sandbox>/v3/"></script>` and pays through the
 * sandbox with the publishable key and the intent's client secret, as it would at Stripe:
 *
 *   const stripe = Stripe('pk_test_...');                      // throws an IntegrationError for a non-pk_ key
 *   const elements = stripe.elements({ clientSecret });
 *   const payment = elements.create('payment');               // mount(target), unmount(), destroy(), on(), off()
 *   payment.mount('#payment-element');
 *   payment.on('change', ({ complete, empty }) => ...);
 *   const { error: invalid } = await elements.submit();        // validation_error, shown under the field
 *   const { paymentIntent, error } = await stripe.confirmPayment({ elements, redirect: 'if_required' });
 *   const { paymentIntent } = await stripe.retrievePaymentIntent(clientSecret);
 *
 * The payment element is three plain inputs ("Card number", "Expiration date (MM / YY)", "Security code") and a
 * line naming the test cards: 4242 4242 4242 4242 pays (`pm_card_visa`), 4000 0000 0000 0002 is declined
 * (`pm_card_chargeDeclined`). No card number leaves the page: the confirmation sends the test PaymentMethod.
 *
 * It runs under a page CSP of `script-src 'self' <sandbox>; connect-src 'self' <sandbox>; style-src 'self'`:
 * no eval, no markup strings, and styles only through the CSSOM (`element.style.x = ...`). It finds the API from
 * its own URL (`document.currentScript`), and calls it without credentials.
 */
(function () {
  'use strict';

  /** The test cards the sandbox knows, by number: the PaymentMethod each confirms with. */
  const TEST_CARDS = new Map([
    ['4242424242424242', 'pm_card_visa'],
    ['4000000000000002', 'pm_card_chargeDeclined'],
  ]);
  const TEST_CARD_HINT =
    'Test cards: 4242 4242 4242 4242 pays, 4000 0000 0000 0002 is declined. Any future expiration date, any 3-digit security code.';
  const USE_A_TEST_CARD = 'This sandbox takes only test cards: use 4242 4242 4242 4242 (pays) or 4000 0000 0000 0002 (declined).';
  const SUBMIT_FIRST =
    'elements.submit() must be called before stripe.confirmPayment(). Call elements.submit() as soon as your customer presses pay, prior to any asynchronous work.';
  const ERROR_COLOR = '#df1b41';
  const BORDER_COLOR = '#c4c9d1';

  /**
   * @typedef {{ type: string, code?: string, message: string, [key: string]: unknown }} StripeError
   * @typedef {{ type: 'validation_error', code: string, message: string }} ValidationError
   * @typedef {{ paymentIntent: Record<string, unknown>, error?: undefined } | { error: StripeError, paymentIntent?: undefined }} IntentResult
   * @typedef {{ elementType: 'payment', complete: boolean, empty: boolean, collapsed: false, value: { type: 'card' } }} ChangeEvent
   * @typedef {'change' | 'ready' | 'focus' | 'blur'} ElementEvent
   * @typedef {{ input: HTMLInputElement, error: HTMLElement, check: (value: string) => ValidationError | undefined }} Field
   * @typedef {{
   *   mount(target: string | HTMLElement): void,
   *   unmount(): void,
   *   destroy(): void,
   *   on(event: ElementEvent, handler: (event: unknown) => void): PaymentElement,
   *   off(event: ElementEvent, handler?: (event: unknown) => void): PaymentElement,
   * }} PaymentElement
   * @typedef {{
   *   validate(): ValidationError | undefined,
   *   submittedPaymentMethod(): string | undefined,
   *   forgetSubmit(): void,
   *   setBusy(busy: boolean): void,
   *   isMounted(): boolean,
   * }} PaymentForm
   * @typedef {{ api: Api, clientSecret: string, payment: { element: PaymentElement, form: PaymentForm } | undefined }} ElementsGroup
   * @typedef {{ origin: string, key: string }} Api
   */

  class IntegrationError extends Error {
    /** @param {string} message */
    constructor(message) {
      super(message);
      this.name = 'IntegrationError';
    }
  }

  /** Where this script came from: the sandbox, whose API it calls. Read now: `currentScript` is gone later. */
  const API_ORIGIN = scriptOrigin();
  /** @type {WeakMap<object, ElementsGroup>} */
  const groups = new WeakMap();
  let elementCount = 0;

  /**
   * @param {unknown} publishableKey
   */
  function Stripe(publishableKey) {
    if (typeof publishableKey !== 'string' || publishableKey === '') {
      throw new IntegrationError(`Invalid value for Stripe(): apiKey should be a string. You specified: ${describe(publishableKey)}.`);
    }
    if (publishableKey.startsWith('sk_') || publishableKey.startsWith('rk_')) {
      throw new IntegrationError('You should not use your secret key with Stripe.js. Please pass a publishable key instead.');
    }
    if (!publishableKey.startsWith('pk_')) {
      throw new IntegrationError(`Invalid value for Stripe(): apiKey should be a publishable key (pk_...). You specified: ${describe(publishableKey)}.`);
    }
    if (API_ORIGIN === undefined) {
      throw new IntegrationError('Stripe.js (sandbox) could not tell which sandbox it was loaded from: load it with <script src="<sandbox>/v3/"></script>.');
    }
    /** @type {Api} */
    const api = { origin: API_ORIGIN, key: publishableKey };
    return Object.freeze({
      /** @param {{ clientSecret?: unknown } | undefined} options */
      elements(options) {
        const clientSecret = options?.clientSecret;
        intentIdOf(clientSecret, 'elements()');
        /** @type {ElementsGroup} */
        const group = { api, clientSecret: /** @type {string} */ (clientSecret), payment: undefined };
        const elements = Object.freeze({
          /**
           * @param {unknown} type
           * @param {unknown} [_options]
           */
          create(type, _options) {
            if (type !== 'payment') throw new IntegrationError(`Invalid Element type: ${describe(type)}. The sandbox's Stripe.js offers only 'payment'.`);
            if (group.payment !== undefined) throw new IntegrationError('Can only create one Element of type payment.');
            const payment = createPaymentElement(() => {
              group.payment = undefined;
            });
            group.payment = payment;
            return payment.element;
          },
          /** @param {unknown} type */
          getElement(type) {
            return type === 'payment' ? (group.payment?.element ?? null) : null;
          },
          /** @returns {Promise<{ error: StripeError } | { selectedPaymentMethod: 'card' }>} */
          async submit() {
            const form = group.payment?.form;
            if (form === undefined || !form.isMounted()) {
              return { error: { type: 'integration_error', message: 'elements.submit(): create and mount the payment Element first.' } };
            }
            const error = form.validate();
            return error === undefined ? { selectedPaymentMethod: 'card' } : { error };
          },
        });
        groups.set(elements, group);
        return elements;
      },

      /**
       * @param {{ elements?: unknown, clientSecret?: unknown, redirect?: unknown, confirmParams?: { return_url?: unknown, receipt_email?: unknown } } | undefined} options
       * @returns {Promise<IntentResult>}
       */
      async confirmPayment(options) {
        return confirmPayment(api, options ?? {});
      },

      /**
       * @param {unknown} clientSecret
       * @returns {Promise<IntentResult>}
       */
      retrievePaymentIntent(clientSecret) {
        const id = intentIdOf(clientSecret, 'retrievePaymentIntent()');
        const query = new URLSearchParams({ client_secret: /** @type {string} */ (clientSecret), key: api.key });
        return call(api, 'GET', `/v1/payment_intents/${encodeURIComponent(id)}?${query}`, undefined);
      },
    });
  }

  /**
   * Confirms with the test card the payment element holds, once `elements.submit()` has accepted its values.
   * @param {Api} api
   * @param {{ elements?: unknown, clientSecret?: unknown, redirect?: unknown, confirmParams?: { return_url?: unknown, receipt_email?: unknown } }} options
   * @returns {Promise<IntentResult>}
   */
  async function confirmPayment(api, options) {
    const group = typeof options.elements === 'object' && options.elements !== null ? groups.get(options.elements) : undefined;
    if (group === undefined || group.api !== api) {
      return integrationError('stripe.confirmPayment(): pass `elements`, the Elements instance (from this stripe.elements()) that holds the payment Element.');
    }
    const clientSecret = options.clientSecret ?? group.clientSecret;
    let intentId;
    try {
      intentId = intentIdOf(clientSecret, 'stripe.confirmPayment()');
    } catch (error) {
      return integrationError(/** @type {Error} */ (error).message);
    }
    const redirect = options.redirect ?? 'always';
    if (redirect !== 'always' && redirect !== 'if_required') {
      return integrationError(`Invalid value for stripe.confirmPayment(): redirect should be 'always' or 'if_required'. You specified: ${describe(redirect)}.`);
    }
    const confirmParams = options.confirmParams ?? {};
    const returnUrl = confirmParams.return_url;
    if (redirect === 'always' && (typeof returnUrl !== 'string' || returnUrl === '')) {
      return integrationError("stripe.confirmPayment(): the `confirmParams.return_url` argument is required unless passing `redirect: 'if_required'`.");
    }
    if (returnUrl !== undefined && (typeof returnUrl !== 'string' || !isAbsoluteUrl(returnUrl))) {
      return integrationError(`Invalid value for stripe.confirmPayment(): confirmParams.return_url should be an absolute URL. You specified: ${describe(returnUrl)}.`);
    }
    const receiptEmail = confirmParams.receipt_email;
    if (receiptEmail !== undefined && typeof receiptEmail !== 'string') {
      return integrationError(`Invalid value for stripe.confirmPayment(): confirmParams.receipt_email should be a string. You specified: ${describe(receiptEmail)}.`);
    }
    const form = group.payment?.form;
    const paymentMethod = form?.submittedPaymentMethod();
    if (form === undefined || paymentMethod === undefined) return integrationError(SUBMIT_FIRST);

    // Each confirmation follows its own submit step, as the customer presses pay again after a decline.
    form.forgetSubmit();
    const body = new URLSearchParams({ payment_method: paymentMethod, client_secret: /** @type {string} */ (clientSecret), key: api.key });
    if (receiptEmail !== undefined) body.set('receipt_email', receiptEmail);
    form.setBusy(true);
    const result = await call(api, 'POST', `/v1/payment_intents/${encodeURIComponent(intentId)}/confirm`, body);
    form.setBusy(false);
    const status = result.paymentIntent !== undefined ? 'succeeded' : result.error.type === 'card_error' ? 'failed' : undefined;
    if (redirect === 'always' && typeof returnUrl === 'string' && status !== undefined) {
      const target = new URL(returnUrl);
      target.searchParams.set('payment_intent', intentId);
      target.searchParams.set('payment_intent_client_secret', /** @type {string} */ (clientSecret));
      target.searchParams.set('redirect_status', status);
      window.location.assign(target.href);
    }
    return result;
  }

  /**
   * One call to the sandbox's API with the publishable key, as Stripe.js makes it (form-encoded, no credentials).
   * @param {Api} api
   * @param {'GET' | 'POST'} method
   * @param {string} path
   * @param {URLSearchParams | undefined} body
   * @returns {Promise<IntentResult>}
   */
  async function call(api, method, path, body) {
    let response;
    try {
      response = await fetch(`${api.origin}${path}`, { method, body, credentials: 'omit', cache: 'no-store' });
    } catch (error) {
      return { error: { type: 'api_connection_error', message: `Could not reach the processor sandbox at ${api.origin}: ${/** @type {Error} */ (error).message}` } };
    }
    /** @type {unknown} */
    let answer;
    try {
      answer = await response.json();
    } catch {
      answer = undefined;
    }
    if (response.ok && isObject(answer) && answer.object === 'payment_intent') return { paymentIntent: answer };
    if (isObject(answer) && isObject(answer.error) && typeof answer.error.type === 'string') {
      return { error: /** @type {StripeError} */ (answer.error) };
    }
    return { error: { type: 'api_error', message: `The processor sandbox answered HTTP ${response.status} without a Stripe error.` } };
  }

  /**
   * The payment element: its inputs, their checks, the submit record, and the handlers of its events.
   * @param {() => void} onDestroy
   * @returns {{ element: PaymentElement, form: PaymentForm }}
   */
  function createPaymentElement(onDestroy) {
    elementCount += 1;
    const prefix = `sandbox-payment-element-${elementCount}`;
    const root = document.createElement('div');
    root.style.display = 'grid';
    root.style.gap = '12px';
    const hint = paragraph(`${prefix}-hint`, TEST_CARD_HINT);
    hint.style.color = '#5f6673';
    hint.style.fontSize = '0.875em';
    /** @type {Record<'number' | 'expiry' | 'cvc', Field>} */
    const fields = {
      number: field(root, `${prefix}-number`, 'Card number', { autocomplete: 'cc-number', placeholder: '1234 1234 1234 1234', hintId: hint.id }, checkNumber),
      expiry: field(root, `${prefix}-expiry`, 'Expiration date (MM / YY)', { autocomplete: 'cc-exp', placeholder: 'MM / YY' }, checkExpiry),
      cvc: field(root, `${prefix}-cvc`, 'Security code', { autocomplete: 'cc-csc', placeholder: 'CVC' }, checkCvc),
    };
    root.appendChild(hint);

    /** @type {Map<ElementEvent, Set<(event: unknown) => void>>} */
    const handlers = new Map([
      ['change', new Set()],
      ['ready', new Set()],
      ['focus', new Set()],
      ['blur', new Set()],
    ]);
    /** @type {HTMLElement | undefined} */
    let mountedIn;
    let destroyed = false;
    /** The values `elements.submit()` last accepted; any edit forgets them. @type {string | undefined} */
    let submittedValues;

    const values = () => [fields.number, fields.expiry, fields.cvc].map((f) => f.input.value).join('\n');
    /** @param {ElementEvent} type @param {unknown} event */
    const emit = (type, event) => {
      for (const handler of handlers.get(type) ?? []) handler(event);
    };
    for (const f of Object.values(fields)) {
      f.input.addEventListener('input', () => {
        submittedValues = undefined;
        showError(f, undefined);
        const allValid = Object.values(fields).every((each) => each.check(each.input.value) === undefined);
        const empty = Object.values(fields).every((each) => each.input.value.trim() === '');
        /** @type {ChangeEvent} */
        const change = { elementType: 'payment', complete: allValid, empty, collapsed: false, value: { type: 'card' } };
        emit('change', change);
      });
      f.input.addEventListener('focus', () => emit('focus', { elementType: 'payment' }));
      f.input.addEventListener('blur', () => emit('blur', { elementType: 'payment' }));
    }

    /** @type {PaymentElement} */
    const element = Object.freeze({
      /** @param {string | HTMLElement} target */
      mount(target) {
        if (destroyed) throw new IntegrationError('This Element has already been destroyed. Please create a new one.');
        if (mountedIn !== undefined) throw new IntegrationError('This Element is already mounted. Use `unmount()` to unmount the Element before re-mounting.');
        const container = containerOf(target);
        container.appendChild(root);
        mountedIn = container;
        queueMicrotask(() => emit('ready', { elementType: 'payment' }));
      },
      unmount() {
        root.remove();
        mountedIn = undefined;
      },
      destroy() {
        element.unmount();
        destroyed = true;
        for (const set of handlers.values()) set.clear();
        onDestroy();
      },
      /** @param {ElementEvent} event @param {(event: unknown) => void} handler */
      on(event, handler) {
        const set = handlers.get(event);
        if (set === undefined) throw new IntegrationError(`The payment Element (sandbox) has no ${describe(event)} event: use 'change', 'ready', 'focus' or 'blur'.`);
        if (typeof handler !== 'function') throw new IntegrationError(`on(${describe(event)}, handler): handler should be a function.`);
        set.add(handler);
        return element;
      },
      /** @param {ElementEvent} event @param {(event: unknown) => void} [handler] */
      off(event, handler) {
        const set = handlers.get(event);
        if (handler === undefined) set?.clear();
        else set?.delete(handler);
        return element;
      },
    });

    /** @type {PaymentForm} */
    const form = {
      validate() {
        /** @type {ValidationError | undefined} */
        let first;
        for (const f of [fields.number, fields.expiry, fields.cvc]) {
          const error = f.check(f.input.value);
          showError(f, error);
          first ??= error;
        }
        submittedValues = first === undefined ? values() : undefined;
        return first;
      },
      submittedPaymentMethod() {
        if (submittedValues === undefined || submittedValues !== values()) return undefined;
        return TEST_CARDS.get(digitsOf(fields.number.input.value));
      },
      forgetSubmit() {
        submittedValues = undefined;
      },
      setBusy(busy) {
        for (const f of Object.values(fields)) f.input.disabled = busy;
      },
      isMounted() {
        return mountedIn !== undefined;
      },
    };
    return { element, form };
  }

  /**
   * A labelled input with the line its error shows on.
   * @param {HTMLElement} root
   * @param {string} id
   * @param {string} labelText
   * @param {{ autocomplete: string, placeholder: string, hintId?: string }} options
   * @param {(value: string) => ValidationError | undefined} check
   * @returns {Field}
   */
  function field(root, id, labelText, options, check) {
    const wrapper = document.createElement('div');
    const label = document.createElement('label');
    label.htmlFor = id;
    label.textContent = labelText;
    label.style.display = 'block';
    label.style.marginBottom = '4px';
    label.style.fontWeight = '600';
    const input = document.createElement('input');
    input.id = id;
    input.type = 'text';
    input.inputMode = 'numeric';
    input.autocomplete = /** @type {AutoFill} */ (options.autocomplete);
    input.placeholder = options.placeholder;
    input.spellcheck = false;
    input.setAttribute('aria-describedby', [`${id}-error`, options.hintId].filter(Boolean).join(' '));
    input.style.display = 'block';
    input.style.boxSizing = 'border-box';
    input.style.width = '100%';
    input.style.padding = '8px 10px';
    input.style.border = `1px solid ${BORDER_COLOR}`;
    input.style.borderRadius = '6px';
    input.style.font = 'inherit';
    const error = paragraph(`${id}-error`, '');
    error.hidden = true;
    error.setAttribute('aria-live', 'polite');
    error.style.color = ERROR_COLOR;
    error.style.fontSize = '0.875em';
    wrapper.append(label, input, error);
    root.appendChild(wrapper);
    return { input, error, check };
  }

  /**
   * @param {Field} f
   * @param {ValidationError | undefined} error
   */
  function showError(f, error) {
    f.error.textContent = error?.message ?? '';
    f.error.hidden = error === undefined;
    f.input.style.borderColor = error === undefined ? BORDER_COLOR : ERROR_COLOR;
    if (error === undefined) f.input.removeAttribute('aria-invalid');
    else f.input.setAttribute('aria-invalid', 'true');
  }

  /**
   * @param {string} id
   * @param {string} text
   */
  function paragraph(id, text) {
    const p = document.createElement('p');
    p.id = id;
    p.textContent = text;
    p.style.margin = '4px 0 0';
    return p;
  }

  /** @param {string} value @returns {ValidationError | undefined} */
  function checkNumber(value) {
    const digits = digitsOf(value);
    if (digits === '') return invalid('incomplete_number', 'Your card number is incomplete.');
    if (!/^[\d\s-]+$/.test(value)) return invalid('invalid_number', 'Your card number is invalid.');
    if (digits.length < 16) return invalid('incomplete_number', 'Your card number is incomplete.');
    if (digits.length > 19 || !luhn(digits)) return invalid('invalid_number', 'Your card number is invalid.');
    if (!TEST_CARDS.has(digits)) return invalid('invalid_number', USE_A_TEST_CARD);
    return undefined;
  }

  /** `MM / YY`, `MM/YY`, `MMYY` or `MM/YYYY`, not before this month. @param {string} value @returns {ValidationError | undefined} */
  function checkExpiry(value) {
    const text = value.replace(/\s/g, '');
    const match = /^(\d{1,2})\/(\d{2}|\d{4})$/.exec(text) ?? /^(\d{2})(\d{2})$/.exec(text);
    if (match === null) return invalid('incomplete_expiry', "Your card's expiration date is incomplete.");
    const month = Number(match[1]);
    const yearText = match[2] ?? '';
    const year = yearText.length === 2 ? 2000 + Number(yearText) : Number(yearText);
    if (month < 1 || month > 12) return invalid('invalid_expiry_month', "Your card's expiration month is invalid.");
    const now = new Date();
    const thisYear = now.getFullYear();
    if (year < thisYear) return invalid('invalid_expiry_year_past', "Your card's expiration year is in the past.");
    if (year > thisYear + 50) return invalid('invalid_expiry_year', "Your card's expiration year is invalid.");
    if (year === thisYear && month < now.getMonth() + 1) return invalid('invalid_expiry_month_past', "Your card's expiration date is in the past.");
    return undefined;
  }

  /** @param {string} value @returns {ValidationError | undefined} */
  function checkCvc(value) {
    const text = value.trim();
    if (/^\d{0,2}$/.test(text)) return invalid('incomplete_cvc', "Your card's security code is incomplete.");
    if (!/^\d{3}$/.test(text)) return invalid('invalid_cvc', "Your card's security code is invalid.");
    return undefined;
  }

  /** @param {string} code @param {string} message @returns {ValidationError} */
  function invalid(code, message) {
    return { type: 'validation_error', code, message };
  }

  /** @param {string} value */
  function digitsOf(value) {
    return value.replace(/[\s-]/g, '');
  }

  /** The card-number checksum (Luhn, mod 10). @param {string} digits */
  function luhn(digits) {
    let sum = 0;
    for (let i = 0; i < digits.length; i += 1) {
      let digit = Number(digits[digits.length - 1 - i]);
      if (i % 2 === 1) {
        digit *= 2;
        if (digit > 9) digit -= 9;
      }
      sum += digit;
    }
    return sum % 10 === 0;
  }

  /**
   * The intent id of a client secret (`pi_123_secret_456` -> `pi_123`); an IntegrationError for anything else.
   * @param {unknown} clientSecret
   * @param {string} where
   */
  function intentIdOf(clientSecret, where) {
    const match = typeof clientSecret === 'string' ? /^(pi_[A-Za-z0-9]+)_secret_[A-Za-z0-9]+$/.exec(clientSecret) : null;
    if (match === null || match[1] === undefined) {
      throw new IntegrationError(
        `Invalid value for ${where}: clientSecret should be a client secret of the form \${id}_secret_\${secret}. You specified: ${describe(clientSecret)}.`,
      );
    }
    return match[1];
  }

  /** @param {string | HTMLElement} target @returns {HTMLElement} */
  function containerOf(target) {
    if (typeof target === 'string') {
      let found;
      try {
        found = document.querySelector(target);
      } catch {
        found = null;
      }
      if (!(found instanceof HTMLElement)) {
        throw new IntegrationError(
          `The selector you specified (${target}) applies to no DOM elements that are currently on the page. Make sure the element exists on the page before calling mount().`,
        );
      }
      return found;
    }
    if (target instanceof HTMLElement) return target;
    throw new IntegrationError('Invalid DOM element. Make sure to call mount() with a valid DOM element or selector.');
  }

  /** @param {string} message @returns {{ error: StripeError }} */
  function integrationError(message) {
    return { error: { type: 'integration_error', message } };
  }

  /** @param {string} text */
  function isAbsoluteUrl(text) {
    try {
      new URL(text);
      return true;
    } catch {
      return false;
    }
  }

  /** @param {unknown} value @returns {value is Record<string, any>} */
  function isObject(value) {
    return typeof value === 'object' && value !== null;
  }

  /** @param {unknown} value */
  function describe(value) {
    return typeof value === 'string' ? JSON.stringify(value) : String(value);
  }

  /** @returns {string | undefined} */
  function scriptOrigin() {
    const current = document.currentScript;
    if (current instanceof HTMLScriptElement && current.src !== '') return new URL(current.src).origin;
    // Run some other way (no currentScript): the page's script element that names this file.
    for (const script of Array.from(document.scripts)) {
      if (script.src !== '' && /\/v3(?:\/(?:stripe\.js)?)?$/.test(new URL(script.src).pathname)) return new URL(script.src).origin;
    }
    return undefined;
  }

  /** @type {any} */ (window).Stripe = Stripe;
})();
