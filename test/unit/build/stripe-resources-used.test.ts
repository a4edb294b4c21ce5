/**
 * Every Stripe resource the service's code uses is in STRIPE_RESOURCES (`infra/build/bundling.ts`): any other is a stub
 * in the deployed bundles, which throws the moment it is used. Static and cheap: the files of `lib/` and
 * `functions/` that import `stripe` (types and comments stripped) are read for property chains that reach a
 * resource of a Stripe client (`.paymentIntents.create`, `.issuing.cards`), the resources known from a real client
 * of the installed SDK.
 */
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { transformSync } from 'esbuild';
import Stripe from 'stripe';
import { keptStripeModules, PROJECT_ROOT, STRIPE_RESOURCES } from '../../../infra/build/bundling';

const RESOURCES_DIR = join(PROJECT_ROOT, 'node_modules', 'stripe', 'esm', 'resources');

/** A resource or namespace of the client, by the property that reaches it, and its module's name (`Issuing/Cards`). */
interface ClientNode {
  resource: string;
  children: Map<string, ClientNode>;
}

/** Whether the module at `path` (under RESOURCES_DIR) declares the class `name`. */
const declares = (path: string, name: string) => {
  try {
    return new RegExp(`^export class ${name}\\b`, 'm').test(readFileSync(join(RESOURCES_DIR, path), 'utf8'));
  } catch {
    return false;
  }
};

/**
 * The resources and namespaces of a Stripe client, by property (`paymentIntents`, `issuing` → `cards`), each with
 * its name in STRIPE_RESOURCES: the module under `stripe/esm/resources/` (in its namespace's directory) that
 * declares its class, as property and module names differ (`oauth` is `OAuth`, `billing.creditBalanceSummaries`
 * is `Billing/CreditBalanceSummary`). A property that is another one's alias (`account`) takes that one's name.
 */
function clientResources(): Map<string, ClientNode> {
  const client = new Stripe('sk_test_resource_scan');
  const named = new Map<object, ClientNode>();
  const unmapped: string[] = [];
  const walk = (holder: object, dir: string, path: string): Map<string, ClientNode> => {
    const nodes = new Map<string, ClientNode>();
    const entries = readdirSync(join(RESOURCES_DIR, dir), { withFileTypes: true });
    for (const [key, value] of Object.entries(holder)) {
      const isResource = value instanceof Stripe.StripeResource;
      const isNamespace = typeof value === 'object' && value !== null && (value as { stripe?: unknown }).stripe === client;
      if (!isResource && !isNamespace) continue;
      const seen = named.get(value);
      if (seen !== undefined) {
        nodes.set(key, seen);
        continue;
      }
      const className = (value as object).constructor.name;
      const modules = entries
        .filter((entry) => (isResource ? entry.isFile() && entry.name.endsWith('.js') && declares(`${dir}${entry.name}`, className) : entry.isDirectory() && declares(`${dir}${entry.name}/index.js`, className)))
        .map((entry) => `${dir}${entry.name.replace(/\.js$/, '')}`);
      if (modules.length !== 1) {
        unmapped.push(`${path}${key} (${className}: ${modules.length === 0 ? 'no module' : modules.join(', ')})`);
        continue;
      }
      const node: ClientNode = { resource: modules[0]!, children: isNamespace ? walk(value, `${modules[0]}/`, `${path}${key}.`) : new Map() };
      named.set(value, node);
      nodes.set(key, node);
    }
    return nodes;
  };
  const resources = walk(client, '', '');
  if (unmapped.length > 0) throw new Error(`No one module under ${RESOURCES_DIR} for the client's ${unmapped.join('; ')}`);
  return resources;
}

interface ResourceUse {
  file: string;
  /** The property chain, as written (`paymentIntents.create`). */
  expression: string;
  resource: string;
}

/** The Stripe resources `source` (TypeScript) reaches through property chains; types and comments do not count. */
function resourceUses(file: string, source: string, resources: Map<string, ClientNode>): ResourceUse[] {
  const { code } = transformSync(source, { loader: 'ts', format: 'esm' });
  const uses: ResourceUse[] = [];
  for (const [chain] of code.matchAll(/(?:\??\.\s*[A-Za-z_$][\w$]*)+/g)) {
    const keys = chain.split(/\??\./).map((key) => key.trim()).filter((key) => key !== '');
    for (let start = 0; start < keys.length; start++) {
      let node = resources.get(keys[start]!);
      if (node === undefined) continue;
      let end = start + 1;
      for (let child = node.children.get(keys[end] ?? ''); child !== undefined; child = node.children.get(keys[end] ?? '')) {
        node = child;
        end++;
      }
      uses.push({ file, expression: keys.slice(start, end + 1).join('.'), resource: node.resource });
      start = end - 1;
    }
  }
  return uses;
}

/** The `.ts` files under `dir`, by their paths from the project root. */
const sourceFiles = (dir: string): string[] =>
  readdirSync(join(PROJECT_ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => join(dir, name));

/**
 * Imports the `stripe` package, types included. Only such a file can hold a Stripe client (typed, as the strict
 * code is): the others are not read, since their own `.events` or `.webhookEndpoints` are no Stripe resource.
 */
const IMPORTS_STRIPE = /\bfrom\s*['"]stripe['"]|\bimport\s*\(\s*['"]stripe['"]\s*\)/;

const resources = clientResources();

describe('the Stripe resources the service uses', () => {
  it('are known from the installed SDK, by the names STRIPE_RESOURCES takes', () => {
    expect(resources.get('paymentIntents')?.resource).toBe('PaymentIntents');
    expect(resources.get('account')?.resource).toBe('Accounts');
    expect(resources.get('oauth')?.resource).toBe('OAuth');
    expect(resources.get('issuing')?.children.get('cards')?.resource).toBe('Issuing/Cards');
    expect(resources.get('v2')?.children.get('core')?.children.get('events')?.resource).toBe('V2/Core/Events');
  });

  it('are found in code wherever a chain reaches them, and nothing else is', () => {
    const source = `
      const client = new Stripe(key);
      await client.refunds.create({ payment_intent: id }); // comments are no use: stripe.customers.list()
      const cards = (await stripe()).issuing.cards;
      client?.account?.retrieve();
      const { data } = event.data.object; type T = Stripe.Subscription;
      Stripe.webhooks.constructEvent(body, header, secret);
    `;

    const found = resourceUses('example.ts', source, resources).map(({ expression, resource }) => [expression, resource]);

    expect(found).toEqual([
      ['refunds.create', 'Refunds'],
      ['issuing.cards', 'Issuing/Cards'],
      ['account.retrieve', 'Accounts'],
    ]);
  });

  it('are all in STRIPE_RESOURCES, so no deployed bundle has them stubbed', () => {
    const sources = [...sourceFiles('lib'), ...sourceFiles('functions')].map((file) => ({ file, source: readFileSync(join(PROJECT_ROOT, file), 'utf8') }));
    const stripeFiles = sources.filter(({ source }) => IMPORTS_STRIPE.test(source));
    const uses = stripeFiles.flatMap(({ file, source }) => resourceUses(file, source, resources));
    const kept = keptStripeModules(STRIPE_RESOURCES);

    const missing = uses
      .filter(({ resource }) => !kept.has(resource))
      .map(({ file, expression, resource }) => `${file} uses .${expression}: Stripe resource ${resource} is not in STRIPE_RESOURCES (infra/build/bundling.ts)`);

    // The scan sees the processor adapter's calls: a scan that found nothing would pass whatever the code did.
    expect(stripeFiles.map(({ file }) => file)).toContain('lib/processor/stripe.ts');
    expect(uses).toEqual(expect.arrayContaining([
      { file: 'lib/processor/stripe.ts', expression: 'paymentIntents.create', resource: 'PaymentIntents' },
      { file: 'lib/processor/stripe.ts', expression: 'paymentIntents.retrieve', resource: 'PaymentIntents' },
    ]));
    expect(missing).toEqual([]);
  });
});
