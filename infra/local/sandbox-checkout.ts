/**
 * The sandbox checkout: `npm start` serves the example partner backend (`examples/partner-backend`) at
 * `/sandbox`, so that `/sandbox/checkout` is a partner's checkout page working against this service and the sandbox
 * processor, with nothing to set up. Locally only: in AWS there is no sandbox processor to pay at.
 *
 * The page needs a partner of its own, which is made on the first request under `/sandbox` through the admin and
 * partner APIs, as an integrator would make it: the partner "Sandbox checkout" (active, KYC approved), its API
 * key, a webhook endpoint at `/sandbox/webhooks/payments` for every event, and the merchant `sandbox-merchant`.
 * Its credentials are kept in `stateDir` (beside DynamoDB's data, readable by the owner only), so a restart finds
 * the same partner; when the data behind them is gone (`--in-memory`, a wiped `.data/`), a new partner is made.
 * The backend's orders and attempts live in memory: a restart forgets them, not the payments at the service.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as z from 'zod';
import { InMemoryOrders } from '../../examples/partner-backend/src/orders';
import { createPartnerBackend, type PartnerBackendHandler } from '../../examples/partner-backend/src/server';
import { ServiceClient } from '../../examples/partner-backend/src/service-client';
import { type Product, Shop } from '../../examples/partner-backend/src/shop';
import { PARTNER_EVENTS } from '../../lib/domain/webhooks';
import { readStateFile, StateFile } from './sandbox/state-file';

const SANDBOX_PATH = '/sandbox';
export const SANDBOX_MERCHANT = 'sandbox-merchant';
const PARTNER_NAME = 'Sandbox checkout';
const STATE_VERSION = 1;

/** What the page sells; one merchant, prices in USD and EUR. */
const PRODUCTS: readonly Product[] = [
  { sku: 'tshirt', name: 'Sandbox T-shirt', client_id: SANDBOX_MERCHANT, amount: 25, currency: 'USD', statement_descriptor_suffix: 'TSHIRT' },
  { sku: 'hoodie', name: 'Sandbox hoodie', client_id: SANDBOX_MERCHANT, amount: 49.99, currency: 'USD', statement_descriptor_suffix: 'HOODIE' },
  { sku: 'poster', name: 'Sandbox poster', client_id: SANDBOX_MERCHANT, amount: 12.34, currency: 'EUR', statement_descriptor_suffix: 'POSTER' },
];

const Credentials = z.object({
  partner_id: z.string().min(1),
  api_key: z.string().min(1),
  hmac_secret: z.string().min(1),
  webhook_secret: z.string().min(1),
});
type Credentials = z.infer<typeof Credentials>;

export interface SandboxCheckoutOptions {
  /** The service's origin as this process reaches it (`http://127.0.0.1:<PORT>`); the webhook endpoint points there too. */
  apiOrigin: string;
  /** The processor's browser library: the sandbox processor's Stripe.js stand-in (`<processor>/v3/`). */
  processorJsUrl: string;
  /** A fresh admin token, to make the partner. */
  adminToken: () => Promise<string>;
  /** Where the partner's credentials are kept; `undefined`: in memory (`--in-memory`). */
  stateDir?: string | undefined;
}

export interface SandboxCheckout {
  /** Answers a request under {@link SANDBOX_PATH}. */
  handle(request: IncomingMessage, response: ServerResponse): void;
  /**
   * Refuses new requests (503), then waits (up to {@link DRAIN_MS}) for the ones running and the background
   * reconciliations: they call the service's HTTP API, so this runs before the API stops listening.
   */
  stop(): Promise<void>;
}

/** How long stopping waits for the checkout's requests and reconciliations, as the HTTP API waits for its own. */
const DRAIN_MS = 10_000;

export const isSandboxPath = (pathname: string) => pathname === SANDBOX_PATH || pathname.startsWith(`${SANDBOX_PATH}/`);

export function sandboxCheckout(options: SandboxCheckoutOptions): SandboxCheckout {
  const serviceUrl = `${options.apiOrigin}/api/v1`;
  /**
   * Made on the first request; a failure is forgotten so the next request tries again, and so is a backend whose
   * key stopped working (revoked in the console): an answer of 502 (the service refused the backend) has the key
   * checked, and the next request then sets the checkout up anew.
   */
  let ready: Promise<SandboxBackend> | undefined;
  const backend = () => {
    ready ??= start(options, serviceUrl).catch((error: unknown) => {
      ready = undefined;
      throw error;
    });
    return ready;
  };
  const recheck = async (used: Promise<SandboxBackend>) => {
    const { credentials } = await used;
    if (!(await keyStillWorks(credentials, serviceUrl).catch(() => true)) && ready === used) ready = undefined;
  };
  let stopping = false;
  /** Requests being answered: each resolves when its response is closed (sent or cut). */
  const running = new Set<Promise<void>>();
  return {
    handle(request, response) {
      if (stopping) {
        unavailable(response, 'The service is stopping');
        return;
      }
      const closed = new Promise<void>((resolve) => response.once('close', resolve));
      running.add(closed);
      void closed.then(() => running.delete(closed));
      const used = backend();
      used.then(
        ({ handler }) => {
          response.once('finish', () => {
            if (response.statusCode === 502) void recheck(used).catch(() => undefined);
          });
          handler.handle(request, response);
        },
        (error: unknown) => {
          console.error('[sandbox-checkout] could not set up the sandbox partner', error);
          unavailable(response, `The sandbox checkout could not set up its partner: ${error instanceof Error ? error.message : String(error)}`);
        },
      );
    },
    stop: async () => {
      stopping = true;
      const drained = (async () => {
        await Promise.all(running);
        if (ready !== undefined) await (await ready.catch(() => undefined))?.handler.idle();
      })();
      await Promise.race([drained, new Promise((resolve) => setTimeout(resolve, DRAIN_MS).unref())]);
    },
  };
}

function unavailable(response: ServerResponse, message: string): void {
  response
    .writeHead(503, { 'content-type': 'application/json', 'x-content-type-options': 'nosniff', 'retry-after': '1' })
    .end(JSON.stringify({ error: message, code: 'SERVICE_UNAVAILABLE' }));
}

interface SandboxBackend {
  handler: PartnerBackendHandler;
  credentials: Credentials;
}

async function start(options: SandboxCheckoutOptions, serviceUrl: string): Promise<SandboxBackend> {
  const credentials = await sandboxPartner(options, serviceUrl);
  const orders = new InMemoryOrders();
  const handler = createPartnerBackend({
    basePath: SANDBOX_PATH,
    partnerId: credentials.partner_id,
    webhookSecret: credentials.webhook_secret,
    service: new ServiceClient({ baseUrl: serviceUrl, apiKey: credentials.api_key, hmacSecret: credentials.hmac_secret }),
    orders,
    shop: new Shop(PRODUCTS, orders),
    frontend: { processorJsUrl: options.processorJsUrl },
  });
  return { handler, credentials };
}

/** The kept partner if the service still knows it and its key, else a new one (kept from now on). */
async function sandboxPartner(options: SandboxCheckoutOptions, serviceUrl: string): Promise<Credentials> {
  const kept = options.stateDir === undefined ? undefined : ((await readStateFile(options.stateDir, Credentials, cannotRead)) as Credentials | undefined);
  if (kept !== undefined && (await keyStillWorks(kept, serviceUrl))) return kept;
  const made = await makePartner(options, serviceUrl);
  if (options.stateDir !== undefined) await new StateFile(options.stateDir, STATE_VERSION, () => made).save();
  return made;
}

const cannotRead = (path: string, reason: string) => new Error(`The sandbox checkout's state file ${path} cannot be read (${reason}); delete it to make a new sandbox partner`);

/**
 * Whether the kept key still works: a read with it answers 200 (true), or 401 API_KEY_INVALID (false: revoked, or
 * the data behind it is gone; a new partner is made). Any other answer throws, keeping the credentials: a
 * suspended partner (403) stays suspended, with the page answering 503, rather than being replaced by a new active
 * one; a failing service (5xx) is tried again on the next request. The merchant needs no check: the credentials are
 * kept only once every step of {@link makePartner}, the merchant last, has succeeded.
 */
async function keyStillWorks(credentials: Credentials, serviceUrl: string): Promise<boolean> {
  const response = await fetch(`${serviceUrl}/clients?limit=1`, { headers: { 'x-api-key': credentials.api_key } });
  const text = await response.text();
  if (response.ok) return true;
  if (response.status === 401) return false;
  throw new Error(`the sandbox partner ${credentials.partner_id} cannot pay now: GET /clients answered ${response.status} ${text.slice(0, 200)}`);
}

/**
 * Partner, key, webhook endpoint, merchant, in that order. A step that fails leaves what came before it unused (a
 * partner with no merchant): the next request starts again with a new partner, since nothing was kept.
 */
async function makePartner(options: SandboxCheckoutOptions, serviceUrl: string): Promise<Credentials> {
  const token = await options.adminToken();
  const admin = async (path: string, body: unknown): Promise<Record<string, unknown>> => {
    const response = await fetch(`${serviceUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`POST ${path} answered ${response.status}: ${text.slice(0, 300)}`);
    return JSON.parse(text) as Record<string, unknown>;
  };
  const partner = await admin('/admin/partners', { name: PARTNER_NAME, service_fee_percentage: 1.5, kyc_status: 'approved' });
  const partnerId = String(partner.partner_id);
  const key = await admin(`/admin/partners/${partnerId}/api-keys`, { scope: 'partner' });
  const endpoint = await admin(`/admin/partners/${partnerId}/webhook-endpoints`, {
    name: 'Sandbox checkout backend',
    url: `${options.apiOrigin}${SANDBOX_PATH}/webhooks/payments`,
    events: PARTNER_EVENTS,
  });
  const credentials: Credentials = Credentials.parse({ partner_id: partnerId, api_key: key.api_key, hmac_secret: key.hmac_secret, webhook_secret: endpoint.secret });
  const client = new ServiceClient({ baseUrl: serviceUrl, apiKey: credentials.api_key, hmacSecret: credentials.hmac_secret });
  await client.createClient({ client_id: SANDBOX_MERCHANT, legal_name: 'Sandbox Shop Ltd', partner_fee_percentage: 2, partner_fee_flat_usd: 0.3 });
  console.log(`[sandbox-checkout] made the sandbox partner ${partnerId} (merchant ${SANDBOX_MERCHANT}) for ${SANDBOX_PATH}/checkout`);
  return credentials;
}
