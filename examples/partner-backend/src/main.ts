/**
 * Runs the example backend from the environment (README.md): `node --import tsx examples/partner-backend/src/main.ts`.
 * The secrets come from the environment only, never from code or the browser.
 */
import { InMemoryOrders } from './orders';
import { startPartnerBackend } from './server';
import { ServiceClient } from './service-client';
import { Shop } from './shop';

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') {
    console.error(`${name} is required (see examples/partner-backend/README.md)`);
    process.exit(1);
  }
  return value;
}

/** The shop's orders, priced on the server; a real backend reads its own order table. README.md pays `order-1001`. */
const orders = new InMemoryOrders(
  ['1001', '1002', '1003'].map((number) => ({
    partner_reference: `order-${number}`,
    client_id: 'merchant-001',
    amount: 49.99,
    currency: 'USD',
    email: 'buyer@example.com',
    statement_descriptor_suffix: `ORDER ${number}`,
  })),
);

/** What the checkout page (`GET /checkout`) sells: each Buy makes a new order of that merchant, priced here. */
const shop = new Shop(
  [
    { sku: 'tshirt', name: 'T-shirt', client_id: 'merchant-001', amount: 25, currency: 'USD' },
    { sku: 'hoodie', name: 'Hoodie', client_id: 'merchant-001', amount: 49.99, currency: 'USD' },
  ],
  orders,
);

const backend = await startPartnerBackend({
  port: Number(process.env.PORT ?? 4000),
  partnerId: required('PARTNER_ID'),
  webhookSecret: required('WEBHOOK_SECRET'),
  orders,
  shop,
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
console.log(`partner backend on ${backend.url}: POST /checkout, POST /webhooks/payments, GET /orders/{partner_reference}, GET /payments/{svc_tx_id}`);
console.log(`checkout page: ${backend.url}/checkout`);
console.log('orders to pay (merchant-001, 49.99 USD each): order-1001, order-1002, order-1003');
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void backend.close().then(() => process.exit(0)));
