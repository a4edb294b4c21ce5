/**
 * `npm run demo`: the whole money flow on the local runtime, narrated step by step, each result checked.
 *
 * It starts `npm start -- --in-memory` on free ports (its own; it can run beside a running `npm start`), with
 * `SETTLEMENT_CUTOFF=now` so today's payment settles at once, and the example partner backend
 * (`examples/partner-backend`) as the partner's side. Then: a partner, its API key and webhook endpoint; a
 * merchant; a checkout through the partner backend; the payment confirmed at the sandbox processor as a browser
 * would; the partner webhook received, verified and reconciled by the backend; a settlement run; the payout; the
 * reconciliation report, checked against the transaction's fee split.
 *
 * Exit code 0 when every step's result is what the service promises; 1 at the first that is not (the step and
 * why are printed, with what to do), so it doubles as a smoke test (`test/integration/examples/demo.test.ts`).
 *
 * It lives among the examples because it is the partner's side of the flow: it builds the example backend from its
 * modules, in this process, to read its records as the money moves (an example may use the service's local
 * tooling to start the service; the service never imports an example).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemoryAttemptStore } from '../partner-backend/src/attempts';
import { InMemoryOrders } from '../partner-backend/src/orders';
import { startPartnerBackend } from '../partner-backend/src/server';
import { ServiceClient } from '../partner-backend/src/service-client';
import { InMemoryProcessedEvents } from '../partner-backend/src/webhooks';
import { issueLocalAdminToken } from '../../lib/auth/admin-token';
import { loadConfig } from '../../lib/config';
import { type ServiceProcess, freePort, sleep, startService, stopService } from '../../infra/local/runtime/service-process';

/** The events the demo's endpoint subscribes to. */
const SUBSCRIBED = ['transaction_succeeded', 'transaction_failed', 'transaction_refunded'];


class DemoFailure extends Error {
  constructor(
    message: string,
    readonly fix: string,
  ) {
    super(message);
  }
}

/** Stops the demo at this step: `what` was wrong, `fix` says what to look at. */
function check(condition: boolean, what: () => string, fix = 'This is a bug in the service: run `npm test` and read the failing test.'): asserts condition {
  if (!condition) throw new DemoFailure(what(), fix);
}

let stepNumber = 0;

/** Runs one narrated step: its title, then its result line, or the failure. */
async function step<T>(title: string, run: () => Promise<{ value: T; result: string }>): Promise<T> {
  stepNumber++;
  const label = `${String(stepNumber).padStart(2)}. ${title}`;
  process.stdout.write(`${label} ... `);
  const started = performance.now();
  const { value, result } = await run();
  process.stdout.write(`ok (${Math.round(performance.now() - started)} ms)\n      ${result}\n`);
  return value;
}

async function json(response: Response, what: string): Promise<any> {
  const text = await response.text();
  check(response.ok, () => `${what} answered ${response.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    check(Date.now() < deadline, () => `timed out after ${timeoutMs / 1000} s waiting for ${what}`, 'Read the end of the service log printed below; `npm start` runs the same pipeline.');
    await sleep(100);
  }
}

async function demo(service: ServiceProcess): Promise<void> {
  const { baseUrl } = service;
  // The service runs on the local defaults (`main`): so does the token it checks.
  const token = await issueLocalAdminToken(loadConfig({}));
  const admin = (method: string, path: string, body?: unknown) =>
    fetch(`${baseUrl}${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });

  const partner = await step('Create a partner (admin API)', async () => {
    const created = await json(await admin('POST', '/admin/partners', { name: 'Demo Pay', service_fee_percentage: 1.5, kyc_status: 'approved' }), 'POST /admin/partners');
    check(created.status === 'active' && created.kyc_status === 'approved', () => `the partner is ${created.status}, KYC ${created.kyc_status}`);
    return { value: created, result: `${created.partner_id} "${created.name}": active, KYC approved, service fee ${created.service_fee_percentage}%` };
  });

  const key = await step("Issue the partner's API key (admin API)", async () => {
    const issued = await json(await admin('POST', `/admin/partners/${partner.partner_id}/api-keys`, { scope: 'partner' }), 'POST /admin/partners/{id}/api-keys');
    check(typeof issued.api_key === 'string' && typeof issued.hmac_secret === 'string', () => 'the key has no api_key or hmac_secret');
    return { value: issued, result: `${issued.key_id}: api_key and hmac_secret shown once, kept by the partner backend` };
  });
  const serviceClient = new ServiceClient({ baseUrl, apiKey: key.api_key, hmacSecret: key.hmac_secret });

  const backendPort = await freePort();
  const webhookUrl = `http://127.0.0.1:${backendPort}/webhooks/payments`;
  const endpoint = await step('Register the partner backend as a webhook endpoint (admin API)', async () => {
    const created = await json(
      await admin('POST', `/admin/partners/${partner.partner_id}/webhook-endpoints`, { name: 'Demo backend', url: webhookUrl, events: SUBSCRIBED }),
      'POST /admin/partners/{id}/webhook-endpoints',
    );
    check(typeof created.secret === 'string' && created.secret.startsWith('whsec_'), () => `the endpoint's secret is ${JSON.stringify(created.secret)}`);
    check(created.events.join() === SUBSCRIBED.join() && created.url === webhookUrl, () => `the endpoint is ${JSON.stringify({ ...created, secret: undefined })}`);
    return { value: created, result: `${created.id} -> ${webhookUrl}, events ${created.events.join(', ')}; its signing secret shown once` };
  });

  const attempts = new InMemoryAttemptStore();
  const orders = new InMemoryOrders();
  const processedEvents = new InMemoryProcessedEvents();
  const verifiedEvents: string[] = [];
  const backend = await startPartnerBackend({
    port: backendPort,
    partnerId: partner.partner_id,
    service: serviceClient,
    webhookSecret: endpoint.secret,
    orders,
    attempts,
    // The backend records an event id once it has verified and processed the event: what the demo watches for.
    processedEvents: { has: (id) => processedEvents.has(id), add: async (id) => (verifiedEvents.push(id), processedEvents.add(id)) },
  });

  try {
    const merchant = await step('Register a merchant (partner API, signed, idempotent)', async () => {
      const created = await serviceClient.createClient({ client_id: 'demo-merchant', legal_name: 'Demo Coffee Ltd', partner_fee_percentage: 3.5, partner_fee_flat_usd: 0.3 });
      check(created.status === 'active', () => `the merchant is ${created.status}`);
      return { value: created, result: `${created.client_id} "${created.legal_name}": platform fee 3.5% + $0.30 a payment` };
    });

    const reference = `order-${Date.now()}`;
    // The partner's own order: the backend takes the merchant and the price from it, never from the browser.
    orders.put({ partner_reference: reference, client_id: merchant.client_id, amount: 100, currency: 'USD', email: 'buyer@example.com', statement_descriptor_suffix: 'DEMO' });
    const checkout = await step('Checkout: the browser asks the partner backend, which creates a checkout intent', async () => {
      const response = await fetch(`${backend.url}/checkout`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ partner_reference: reference }),
      });
      const answer = await json(response, 'POST /checkout of the partner backend');
      const attempt = await attempts.get(reference);
      check(attempt !== undefined && attempt.status === 'pending', () => `the backend's attempt record is ${JSON.stringify(attempt)}`);
      check(typeof answer.client_secret === 'string' && answer.processor_publishable_key.startsWith('pk_'), () => `the browser got ${JSON.stringify(answer)}`);
      return {
        value: { ...answer, attempt },
        result: `${attempt.svc_tx_id} pending, intent ${attempt.processor_payment_intent_id}; the backend kept ${Object.keys(attempt).join(', ')}`,
      };
    });

    await step('Confirm the payment at the sandbox processor (as the payment element does: publishable key + client_secret, a test card)', async () => {
      // What Stripe.js sends from the browser: no secret key, only what the backend gave the page.
      const response = await fetch(`http://127.0.0.1:${service.env.PROCESSOR_SANDBOX_PORT}/v1/payment_intents/${checkout.attempt.processor_payment_intent_id}/confirm`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ payment_method: 'pm_card_visa', client_secret: checkout.client_secret, key: checkout.processor_publishable_key }),
      });
      const intent = await json(response, 'POST /v1/payment_intents/{id}/confirm with the publishable key');
      check(intent.status === 'succeeded', () => `the intent is ${intent.status}`);
      return { value: intent, result: `${intent.id} succeeded; the sandbox now posts payment_intent.succeeded, signed, to the service` };
    });

    const transaction = await step('Partner webhook received, verified and reconciled by the backend', async () => {
      const order = await until('the backend to hold a verified webhook and the succeeded payment', async () => {
        if (verifiedEvents.length === 0) return undefined;
        const answer = await json(await fetch(`${backend.url}/orders/${reference}`), 'GET /orders/{reference} of the partner backend');
        return answer.status === 'succeeded' ? answer : undefined;
      });
      check(order.svc_tx_id === checkout.attempt.svc_tx_id, () => `the backend's order names ${order.svc_tx_id}, its checkout ${checkout.attempt.svc_tx_id}`);
      // What was sent: the service's own record of the delivery the backend verified.
      const deliveries = await json(await admin('GET', `/admin/partners/${partner.partner_id}/webhook-deliveries`), 'GET /admin/partners/{id}/webhook-deliveries');
      const delivered = deliveries.items.find((item: { event_id: string }) => verifiedEvents.includes(item.event_id));
      check(
        delivered !== undefined &&
          delivered.event === 'transaction_succeeded' &&
          delivered.svc_tx_id === order.svc_tx_id &&
          delivered.endpoint_id === endpoint.id &&
          delivered.status === 'succeeded' &&
          delivered.last_http_status === 200,
        () => `the verified event ${verifiedEvents.join(', ')} is not a delivered (succeeded) transaction_succeeded delivery of ${order.svc_tx_id}: ${JSON.stringify(deliveries.items)}`,
      );
      const read = await serviceClient.getTransaction(order.svc_tx_id);
      check(read.status === 'succeeded' && read.amount === 100 && read.currency === 'USD', () => `the service says ${read.status} ${read.amount} ${read.currency}`);
      const { amount, processorFee, platformFee, netAmount } = read;
      check(processorFee !== null && platformFee !== null && netAmount !== null, () => 'the fee split is missing');
      check(Math.round((processorFee! + platformFee! + netAmount!) * 100) === Math.round(amount * 100), () => `fees ${processorFee} + ${platformFee} + net ${netAmount} != ${amount}`);
      return {
        value: read,
        result: `event ${verifiedEvents[0]} verified (Standard Webhooks); ${read.svcTxId} succeeded: ${amount} ${read.currency} = processor ${processorFee} + platform ${platformFee} + net ${netAmount}`,
      };
    });

    const partnerRead = (method: string, path: string, body?: unknown) =>
      fetch(`${baseUrl}${path}`, { method, headers: { 'x-api-key': key.api_key, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });

    const batch = await step('Run settlement (partner API)', async () => {
      const run = await json(await partnerRead('POST', `/settlements/run?client_id=${merchant.client_id}`), 'POST /settlements/run');
      const found = run.batches.find((candidate: { transactionIds: string[] }) => candidate.transactionIds.includes(transaction.svcTxId));
      check(found !== undefined, () => `no batch holds ${transaction.svcTxId}: ${JSON.stringify(run)}`, 'The service must run with SETTLEMENT_CUTOFF=now for a payment made today to settle.');
      check(found.totalNet === transaction.netAmount && found.status === 'pending', () => `the batch is ${JSON.stringify(found)}`);
      return { value: found, result: `batch ${found.id}: ${found.transactionIds.length} payment, gross ${found.totalGross}, net ${found.totalNet} ${found.currency}, pending` };
    });

    await step('Pay the batch out over a rail (partner API)', async () => {
      const paid = await json(await partnerRead('POST', '/settlements/pay', { settlement_batch_id: batch.id }), 'POST /settlements/pay');
      const transfer = paid.railATransferId;
      check(paid.status === 'sent', () => `the batch is ${paid.status}: ${paid.failureReason}`);
      check(typeof transfer === 'string' && paid.railBTransferId === null, () => `a USD batch goes over rail A: rail A ${paid.railATransferId}, rail B ${paid.railBTransferId}`);
      // The rail's side: the sandbox rail recorded this very transfer, for the batch's net.
      const ledger = await json(await fetch(`http://127.0.0.1:${service.env.RAILS_SANDBOX_PORT}/rail-a/transfers`), 'GET /rail-a/transfers of the sandbox rails');
      const sent = ledger.items.find((item: { transfer_id: string }) => item.transfer_id === transfer);
      check(sent?.status === 'paid' && sent.amount === batch.totalNet && sent.currency === 'USD' && sent.batch_id === batch.id, () => `the rail recorded ${JSON.stringify(sent)}`);
      const again = await partnerRead('POST', '/settlements/pay', { settlement_batch_id: batch.id });
      const refused = (await again.json()) as { code?: string };
      check(again.status === 409 && refused.code === 'BATCH_ALREADY_PAID', () => `paying again answered ${again.status} ${refused.code}`);
      const settled = await serviceClient.getTransaction(transaction.svcTxId);
      check(settled.settlementStatus === 'paid', () => `the transaction's settlement status is ${settled.settlementStatus}`);
      return { value: paid, result: `sent over rail A: transfer ${transfer} of ${sent.amount} USD; paying again is 409 BATCH_ALREADY_PAID; the transaction is settled (paid)` };
    });

    await step('Reconciliation report (CSV)', async () => {
      const response = await partnerRead('GET', `/settlements/${batch.id}/report.csv`);
      const csv = await response.text();
      check(response.status === 200, () => `the report answered ${response.status}: ${csv.slice(0, 200)}`);
      const [header, ...lines] = csv.trim().split(/\r?\n/);
      check(header === 'type,svc_tx_id,partner_reference,created_at,currency,gross,processor_fee,platform_fee,net', () => `the header is ${header}`);
      const line = lines.find((candidate) => candidate.includes(transaction.svcTxId))?.split(',');
      check(line !== undefined, () => `no line for ${transaction.svcTxId}:\n${csv}`);
      const [, , , , , gross, processorFee, platformFee, net] = line.map(Number);
      check(
        gross === transaction.amount && processorFee === transaction.processorFee && platformFee === transaction.platformFee && net === transaction.netAmount,
        () => `the line ${line.join(',')} does not match the transaction's split`,
      );
      const total = lines.find((candidate) => candidate.startsWith('total,'))?.split(',');
      const [, , , , , totalGross, , , totalNet] = total?.map(Number) ?? [];
      check(totalGross === batch.totalGross && totalNet === batch.totalNet, () => `the total row ${total?.join(',')} is not the batch's totals ${batch.totalGross}/${batch.totalNet}`);
      return { value: csv, result: `${lines.length} rows under the header:\n${csv.trim().split(/\r?\n/).map((row) => `        ${row}`).join('\n')}` };
    });
  } finally {
    await backend.close();
  }
}

/** The last lines of the service's log (warnings and errors: it runs with LOG_LEVEL=WARN). */
function logTail(logFile: string, lines = 20): string {
  if (!existsSync(logFile)) return '(no service log)';
  const text = readFileSync(logFile, 'utf8').trimEnd();
  return text === '' ? '(the service logged nothing)' : text.split('\n').slice(-lines).join('\n');
}

async function main(): Promise<number> {
  console.log('Partner Payments demo: the whole money flow on the local runtime\n');
  const dataDir = mkdtempSync(join(tmpdir(), 'partner-payments-demo-'));
  const logFile = join(dataDir, 'service.log');
  process.stdout.write('    Starting the service (npm start -- --in-memory, on free ports) ');
  // A dot every 2 s while it starts (DynamoDB Local's JVM takes a few seconds; a busy machine longer).
  const progress = setInterval(() => process.stdout.write('.'), 2_000);
  let service: ServiceProcess;
  try {
    // The local defaults, whatever the shell has set (an https-only webhook rule or a real processor key would stop it).
    service = await startService(dataDir, () => ({ SETTLEMENT_CUTOFF: 'now' }), { logFile, localDefaults: true });
  } catch (error) {
    console.log(
      ` failed\n\n${(error as Error).message}\nThe service's log ends with:\n${logTail(logFile)}\n` +
        'Fix: `npm ci` first; DynamoDB Local needs Java 17+ (`java -version`); run `npm start` alone to see why it does not start.',
    );
    rmSync(dataDir, { recursive: true, force: true });
    return 1;
  } finally {
    clearInterval(progress);
  }
  console.log(` ready in ${(service.startupMs / 1000).toFixed(1)} s at ${service.baseUrl}\n`);
  try {
    await demo(service);
    console.log('\nEvery step did what the service promises.');
    return 0;
  } catch (error) {
    const fix = error instanceof DemoFailure ? error.fix : 'Unexpected: run `npm test` and read the failing test.';
    console.log(`FAILED\n\n${error instanceof Error ? error.message : String(error)}\nThe service's log ends with:\n${logTail(logFile)}\nFix: ${fix}`);
    return 1;
  } finally {
    await stopService(service);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
