/**
 * `npm run bench`, calls per request: how many DynamoDB calls and processor (sandbox) HTTP requests each partner
 * mutation makes, in a service of its own.
 *
 * - DynamoDB: the local runtime answers every request with `x-local-dynamodb-calls`, the calls the function made
 *   (counted by a middleware on the service's own DynamoDB client; `infra/local/runtime/http-api.ts`).
 * - Processor: this service is started with `PROCESSOR_API_BASE` pointing at a counting proxy (node:http, here)
 *   in front of its sandbox processor, so every request the stripe SDK sends is seen and forwarded unchanged.
 *   The proxy is only in this service's path: the throughput section runs without it.
 *
 * Each mutation is sent twice, one after another, and the second (warm: its function loaded, its clients made)
 * is reported; nothing else calls the processor meanwhile (the health check, which does, is not called).
 */
import { randomUUID } from 'node:crypto';
import { Agent, createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { loadConfig } from '../lib/config';
import { DYNAMODB_CALLS_HEADER } from '../infra/local/runtime/http-api';
import { checkoutBody, createBenchClient, createBenchPartner } from './api';
import type { ServiceProcess } from '../infra/local/runtime/service-process';

/**
 * A reverse proxy that forwards everything to 127.0.0.1:`targetPort` (set once the service's ports are chosen)
 * and logs `METHOD path` of each request.
 */
async function startCountingProxy() {
  const log: string[] = [];
  const agent = new Agent({ keepAlive: true });
  const target = { port: 0 };
  const server = createServer((req, res) => {
    log.push(`${req.method ?? '?'} ${(req.url ?? '').split('?')[0]}`);
    const upstream = httpRequest({ host: '127.0.0.1', port: target.port, method: req.method, path: req.url, headers: req.headers, agent }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    target,
    log,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}

export interface CallsRow {
  request: string;
  status: number;
  dynamodb_calls: number;
  processor_calls: number;
  processor_requests: string;
  /** The first of the two sends (its function cold), when it counted differently: `dynamodb/processor`. */
  first_send: string;
}

export interface CallsResult {
  rows: CallsRow[];
  checkoutDynamodbCalls: number;
  checkoutProcessorCalls: number;
}

export interface CallsHooks {
  startService(extraEnv: (env: Record<string, string>) => Record<string, string>): Promise<ServiceProcess>;
  stopService(service: ServiceProcess): Promise<number>;
  adminToken(): Promise<string>;
}

interface Sent {
  status: number;
  body: Record<string, unknown>;
  dynamodbCalls: number;
  processorRequests: string[];
}

/** Starts the counting service, sends each mutation twice and stops it. */
export async function benchCalls(hooks: CallsHooks): Promise<CallsResult> {
  const proxy = await startCountingProxy();
  try {
    const service = await hooks.startService((env) => {
      proxy.target.port = Number(env.PROCESSOR_SANDBOX_PORT);
      return { PROCESSOR_API_BASE: proxy.url };
    });
    try {
      return await countCalls(service, await hooks.adminToken(), proxy.log);
    } finally {
      await hooks.stopService(service);
    }
  } finally {
    await proxy.close();
  }
}

async function countCalls(service: ServiceProcess, token: string, processorLog: string[]): Promise<CallsResult> {
  const partner = await createBenchPartner(service, token, 'Bench Calls');
  const merchant = await createBenchClient(partner, `calls-merchant-${randomUUID().slice(0, 6)}`);
  const config = loadConfig({ ...process.env, ...service.env });
  // Straight to the sandbox (not through the proxy): the intents attach-intent attaches, made as a partner would.
  const stripe = new Stripe(config.PROCESSOR_SECRET_KEY ?? 'sk_test_sandbox_local', { host: '127.0.0.1', port: Number(service.env.PROCESSOR_SANDBOX_PORT), protocol: 'http' });

  const send = async (path: string, body: unknown, idempotencyKey?: string): Promise<Sent> => {
    const before = processorLog.length;
    const response = await partner.signed(path, body, idempotencyKey);
    const json = (await response.json()) as Record<string, unknown>;
    return { status: response.status, body: json, dynamodbCalls: Number(response.headers.get(DYNAMODB_CALLS_HEADER)), processorRequests: processorLog.slice(before) };
  };
  const rows: CallsRow[] = [];
  /** Sends what `make` builds twice (the first send warms the function) and records the second. */
  const measure = async (label: string, expected: number, make: () => Promise<Sent>): Promise<Sent> => {
    const first = await make();
    const warm = await make();
    for (const sent of [first, warm]) {
      if (sent.status !== expected) throw new Error(`${label} answered ${sent.status}, expected ${expected}: ${JSON.stringify(sent.body)}`);
    }
    const differs = first.dynamodbCalls !== warm.dynamodbCalls || first.processorRequests.length !== warm.processorRequests.length;
    rows.push({
      request: label,
      status: warm.status,
      dynamodb_calls: warm.dynamodbCalls,
      processor_calls: warm.processorRequests.length,
      processor_requests: warm.processorRequests.join(', ') || '-',
      first_send: differs ? `${first.dynamodbCalls}/${first.processorRequests.length}` : 'same',
    });
    return warm;
  };

  let n = 0;
  const reference = () => `calls-${++n}-${randomUUID().slice(0, 8)}`;
  await measure('POST /clients', 201, () => send('/clients', { client_id: `calls-client-${reference()}`, legal_name: 'Calls Ltd' }));
  await measure('POST /transactions/checkout-intent', 201, () => send('/transactions/checkout-intent', checkoutBody(partner.partnerId, merchant.clientId, reference())));
  const replayed = { key: randomUUID(), body: checkoutBody(partner.partnerId, merchant.clientId, reference()) };
  const original = await send('/transactions/checkout-intent', replayed.body, replayed.key);
  if (original.status !== 201) throw new Error(`checkout-intent answered ${original.status}: ${JSON.stringify(original.body)}`);
  const replay = await measure('checkout-intent, replayed (same key and body)', 201, () => send('/transactions/checkout-intent', replayed.body, replayed.key));
  if (replay.body.idempotentReplay !== true || replay.body.svc_tx_id !== original.body.svc_tx_id) throw new Error(`the replay was not a replay: ${JSON.stringify(replay.body)}`);
  await measure('POST /transactions/checkout-intent-v2', 201, () => send('/transactions/checkout-intent-v2', checkoutBody(partner.partnerId, merchant.clientId, reference())));
  const initializeBody = () => ({ partner_id: partner.partnerId, client_id: merchant.clientId, amount: 10, currency: 'USD', partner_reference: reference() });
  await measure('POST /transactions/initialize', 201, () => send('/transactions/initialize', initializeBody()));
  await measure('POST /transactions/attach-intent', 200, async () => {
    const initialized = await send('/transactions/initialize', initializeBody());
    const svcTxId = String(initialized.body.svc_tx_id);
    const intent = await stripe.paymentIntents.create({ amount: 1000, currency: 'usd', metadata: { svc_tx_id: svcTxId, partner_id: partner.partnerId } });
    return send('/transactions/attach-intent', { svc_tx_id: svcTxId, processor_payment_intent_id: intent.id });
  });
  const checkout = rows[1] as CallsRow;
  return { rows, checkoutDynamodbCalls: checkout.dynamodb_calls, checkoutProcessorCalls: checkout.processor_calls };
}
