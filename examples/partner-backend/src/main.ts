/**
 * Runs the example backend from the environment (README.md): `node --import tsx examples/partner-backend/src/main.ts`.
 * The secrets come from the environment only, never from code or the browser.
 */
import { ServiceClient } from './service-client';
import { startPartnerBackend } from './server';

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') {
    console.error(`${name} is required (see examples/partner-backend/README.md)`);
    process.exit(1);
  }
  return value;
}

const backend = await startPartnerBackend({
  port: Number(process.env.PORT ?? 4000),
  partnerId: required('PARTNER_ID'),
  webhookSecret: required('WEBHOOK_SECRET'),
  service: new ServiceClient({
    baseUrl: process.env.SERVICE_URL ?? 'http://localhost:3000/api/v1',
    apiKey: required('API_KEY'),
    hmacSecret: required('HMAC_SECRET'),
    onRetry: ({ path, attempt, code, delayMs }) => console.warn(`[partner-backend] ${path}: ${code}, try ${attempt + 1} in ${delayMs} ms`),
  }),
});
console.log(`partner backend on ${backend.url}: POST /checkout, POST /webhooks/payments, GET /orders/{partner_reference}`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void backend.close().then(() => process.exit(0)));
