/**
 * The deployed bundles carry Stripe's core only (`infra/build/bundling.ts`): the SDK as a function bundles it, built
 * with the same esbuild options. The resources the service uses work; every other one is a stub that fails
 * loudly, naming itself and where to add it, the moment anything uses it.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type StripeSdk from 'stripe';
import { STRIPE_RESOURCES, trimStripe } from '../../../infra/build/bundling';
import { testBundles } from '../../support/bundles';

type Bundled = { Stripe: typeof StripeSdk };

/** The SDK as a function's bundle has it. */
const SDK_MODULE = "export { default as Stripe } from 'stripe';";
const notBundled = (resource: string) =>
  `Stripe resource ${resource} is not bundled in this function: add it to STRIPE_RESOURCES in infra/build/bundling.ts`;

const bundles = testBundles();
let Stripe: typeof StripeSdk;
let stripe: StripeSdk;
beforeAll(async () => {
  ({ Stripe } = await bundles.importModule<Bundled>(SDK_MODULE));
  stripe = new Stripe('sk_test_trimmed');
}, 30_000);
afterAll(() => bundles.remove());

describe('the trimmed Stripe SDK', () => {
  it('keeps what the service uses: payment intents, the webhook verifier, the error classes', () => {
    expect(typeof stripe.paymentIntents.create).toBe('function');
    expect(typeof stripe.paymentIntents.retrieve).toBe('function');
    expect(typeof Stripe.webhooks.constructEvent).toBe('function');
    expect(new Stripe.errors.StripeInvalidRequestError({ message: 'refused' })).toBeInstanceOf(Stripe.errors.StripeError);
  });

  it('refuses any use of a stubbed resource, naming it and where to add it', () => {
    expect(() => stripe.accounts.list).toThrow(`${notBundled('Accounts')} (used: list)`);
    expect(() => stripe.customers.create).toThrow(notBundled('Customers'));
    expect(() => 'retrieve' in stripe.refunds).toThrow(notBundled('Refunds'));
    expect(() => Object.keys(stripe.charges)).toThrow(notBundled('Charges'));
    expect(() => {
      (stripe.prices as unknown as Record<string, unknown>).list = () => undefined;
    }).toThrow(notBundled('Prices'));
    expect(() => stripe.oauth.token).toThrow(notBundled('OAuth'));
  });

  it('refuses a stubbed namespace as a whole, and a nested resource by its path', () => {
    expect(() => stripe.issuing.cards).toThrow(notBundled('Issuing'));
    expect(() => stripe.v2.core.events).toThrow(notBundled('V2'));
    // Stripe.resources (the SDK's own table of resource classes): its namespaces construct the same stubs.
    const testHelpers = new (Stripe as unknown as { resources: { TestHelpers: new (s: StripeSdk) => { refunds: unknown } } }).resources.TestHelpers(stripe);
    expect(() => testHelpers.refunds).not.toThrow();
    expect(() => (testHelpers.refunds as { expire: unknown }).expire).toThrow(notBundled('TestHelpers/Refunds'));
  });

  it('bundles a nested resource named in the list with the namespaces above it, and stubs its siblings', async () => {
    const { Stripe: WithCards } = await bundles.importModule<Bundled>(SDK_MODULE, [trimStripe([...STRIPE_RESOURCES, 'Issuing/Cards'])]);
    const client = new WithCards('sk_test_trimmed');

    expect(typeof client.issuing.cards.list).toBe('function');
    expect(() => client.issuing.authorizations.list).toThrow(notBundled('Issuing/Authorizations'));
  }, 30_000);

  it('fails the build on a name that is not a Stripe resource', async () => {
    await expect(bundles.importModule(SDK_MODULE, [trimStripe(['PaymentIntent'])])).rejects.toThrow(/STRIPE_RESOURCES names PaymentIntent/);
  }, 30_000);

  it('names only resources the installed SDK has', () => {
    const resources = fileURLToPath(new URL('../../../node_modules/stripe/esm/resources/', import.meta.url));

    for (const name of STRIPE_RESOURCES) expect(existsSync(`${resources}${name}.js`) || existsSync(`${resources}${name}/index.js`)).toBe(true);
  });
});
