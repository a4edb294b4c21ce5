/**
 * Runs the example backend from the environment (README.md): `node --import tsx examples/partner-backend/src/main.ts`.
 * The secrets come from the environment only, never from code or the browser.
 *
 * Started by a supervisor with an IPC channel (node's `child_process.fork`), it tells the supervisor where it
 * listens once it does (`{ event: 'listening', url }`, which `PORT=0` needs), and exits as soon as the channel
 * closes: a backend that outlived the process that started it (stopped, or killed outright) would hold its port
 * and answer for a partner nobody runs any more. `npm start` runs it so at `/sandbox`.
 */
import { InMemoryOrders } from './orders';
import { startPartnerBackend } from './server';
import { ServiceClient } from './service-client';
import { type Product, Shop } from './shop';

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') fail(`${name} is required (see examples/partner-backend/README.md)`);
  return value;
}

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

/** What the checkout page (`GET /checkout`) sells unless `PRODUCTS` says otherwise: each Buy makes a new order, priced here. */
const SAMPLE_PRODUCTS: readonly Product[] = [
  { sku: 'tshirt', name: 'T-shirt', client_id: 'merchant-001', amount: 25, currency: 'USD' },
  { sku: 'hoodie', name: 'Hoodie', client_id: 'merchant-001', amount: 49.99, currency: 'USD' },
];

/**
 * `PRODUCTS`: a JSON array of products (shop.ts's `Product`), read once at start; a real shop reads its catalogue
 * instead. Checked here, since a product without a merchant or a price would only fail at checkout.
 */
function productsFrom(text: string): Product[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    fail(`PRODUCTS is not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  const isProduct = (value: unknown): value is Product => {
    if (typeof value !== 'object' || value === null) return false;
    const { sku, name, client_id, amount, currency, statement_descriptor_suffix } = value as Record<string, unknown>;
    return (
      [sku, name, client_id, currency].every((field) => typeof field === 'string' && field !== '') &&
      typeof amount === 'number' &&
      amount > 0 &&
      (statement_descriptor_suffix === undefined || typeof statement_descriptor_suffix === 'string')
    );
  };
  if (!Array.isArray(parsed) || parsed.length === 0 || !parsed.every(isProduct)) {
    fail('PRODUCTS must be a JSON array of {"sku","name","client_id","amount","currency"[,"statement_descriptor_suffix"]}');
  }
  return parsed;
}

const products = process.env.PRODUCTS === undefined || process.env.PRODUCTS === '' ? undefined : productsFrom(process.env.PRODUCTS);

/**
 * The shop's orders, priced on the server; a real backend reads its own order table. README.md pays `order-1001`.
 * The sample orders belong to the sample products' merchant: a shop given its own `PRODUCTS` starts with none.
 */
const orders = new InMemoryOrders(
  products !== undefined
    ? []
    : ['1001', '1002', '1003'].map((number) => ({
        partner_reference: `order-${number}`,
        client_id: 'merchant-001',
        amount: 49.99,
        currency: 'USD',
        email: 'buyer@example.com',
        statement_descriptor_suffix: `ORDER ${number}`,
      })),
);

const basePath = process.env.BASE_PATH ?? '';
if (basePath !== '' && (!basePath.startsWith('/') || basePath.endsWith('/'))) fail(`BASE_PATH "${basePath}" must start with / and not end with one (e.g. /shop)`);

const backend = await startPartnerBackend({
  port: Number(process.env.PORT ?? 4000),
  basePath,
  partnerId: required('PARTNER_ID'),
  webhookSecret: required('WEBHOOK_SECRET'),
  orders,
  shop: new Shop(products ?? SAMPLE_PRODUCTS, orders),
  // Stripe.js in production (https://js.stripe.com/v3/); locally the sandbox processor's stand-in.
  frontend: {
    processorJsUrl: process.env.PROCESSOR_JS_URL ?? 'http://127.0.0.1:12111/v3/',
    // The page's CSP origins for the processor; by default Stripe's for Stripe.js, else the library's origin.
    processorOrigins: process.env.PROCESSOR_ORIGINS?.split(/\s+/).filter((origin) => origin !== ''),
  },
  service: new ServiceClient({
    baseUrl: process.env.SERVICE_URL ?? 'http://localhost:3000/api/v1',
    apiKey: required('API_KEY'),
    hmacSecret: required('HMAC_SECRET'),
    onRetry: ({ path, attempt, code, delayMs }) => console.warn(`[partner-backend] ${path}: ${code}, try ${attempt + 1} in ${delayMs} ms`),
  }),
});
const root = `${backend.url}${basePath}`;
console.log(`partner backend on ${root}: POST /checkout, POST /webhooks/payments, GET /orders/{partner_reference}, GET /payments/{svc_tx_id}`);
console.log(`checkout page: ${root}/checkout`);
if (products === undefined) console.log('orders to pay (merchant-001, 49.99 USD each): order-1001, order-1002, order-1003');
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void backend.close().then(() => process.exit(0)));
if (process.send !== undefined) {
  // The supervisor is gone (it stopped, or died): nobody is left to stop this process, and the requests it would
  // answer were the supervisor's to send. Its own graceful stop is SIGTERM, sent before the channel closes.
  process.once('disconnect', () => process.exit(0));
  process.send({ event: 'listening', url: root });
}
