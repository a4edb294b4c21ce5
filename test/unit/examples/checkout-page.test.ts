/**
 * The example checkout page's Content-Security-Policy (examples/partner-backend/src/checkout-page.ts): Stripe.js
 * gets every origin Stripe's library loads, calls and frames; the sandbox's stand-in only its own; the configured
 * library URL lands in the page as a plain attribute value, whatever characters it holds.
 */
import { describe, expect, it } from '@jest/globals';
import { CheckoutPage, processorOriginsFor, STRIPE_ORIGINS } from '../../../examples/partner-backend/src/checkout-page';

const policyOf = (page: CheckoutPage) => page.file('/checkout')?.headers['content-security-policy'] ?? '';

describe('the checkout page', () => {
  it("allows Stripe's origins for Stripe.js (API and hooks too), only the stand-in's own origin for the sandbox, and given origins as given", () => {
    expect(processorOriginsFor(new URL('https://js.stripe.com/v3/'))).toEqual(STRIPE_ORIGINS);
    expect(processorOriginsFor(new URL('http://127.0.0.1:12111/v3/'))).toEqual(['http://127.0.0.1:12111']);
    expect(processorOriginsFor(new URL('https://js.stripe.com/v3/'), ['https://proxy.example'])).toEqual(['https://proxy.example']);
    expect(processorOriginsFor(new URL('https://js.stripe.com/v3/'), [])).toEqual(STRIPE_ORIGINS);

    const stripePolicy = policyOf(new CheckoutPage({ processorJsUrl: 'https://js.stripe.com/v3/' }));
    for (const directive of ['script-src', 'connect-src', 'frame-src']) {
      expect(stripePolicy).toContain(`${directive} ${directive === 'frame-src' ? '' : "'self' "}${STRIPE_ORIGINS.join(' ')}`);
    }
  });

  it('puts the library URL in the page escaped, never read as a replacement pattern', () => {
    const page = new CheckoutPage({ processorJsUrl: 'http://127.0.0.1:12111/v3/?a=$`&b="<x>' });
    const html = page.file('/checkout')?.content ?? '';

    expect(html).toContain('<script src="http://127.0.0.1:12111/v3/?a=$`&amp;b=%22%3Cx%3E"></script>');
    expect(html.match(/<script src=/g)).toHaveLength(1);
  });

  it('refuses a library URL that is not http(s)', () => {
    expect(() => new CheckoutPage({ processorJsUrl: 'javascript:alert(1)' })).toThrow(/http\(s\) URL/);
  });
});
