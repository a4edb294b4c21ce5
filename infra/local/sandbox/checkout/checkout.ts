/**
 * The sandbox checkout: `npm start` serves the example partner backend (`examples/partner-backend`) at `/sandbox`,
 * so that `/sandbox/checkout` is a partner's checkout page working against this service and the sandbox processor,
 * with nothing to set up. Locally only: in AWS there is no sandbox processor to pay at.
 *
 * The backend runs as a partner runs it, in a process of its own (backend-process.ts), started on the first
 * request under `/sandbox`, so only those who use the page pay for its start; every request under `/sandbox` is
 * passed on to it (reverse-proxy.ts). The service's port stays the only address a user sees, the webhook endpoint
 * the sandbox partner registers (`/sandbox/webhooks/payments`) included. Before the backend starts, its partner is
 * made or found (partner.ts). The backend's orders and attempts live in its memory: a restart forgets them, not the
 * payments at the service.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type BackendProcess, startBackendProcess } from './backend-process';
import { type Credentials, keyStillWorks, partnerKeeper, SANDBOX_MERCHANT, sandboxPartner } from './partner';
import { backendAgent, proxyRequest } from './reverse-proxy';

export { SANDBOX_MERCHANT } from './partner';

const SANDBOX_PATH = '/sandbox';

/** What the page sells; one merchant, prices in USD and EUR. */
const PRODUCTS = [
  { sku: 'tshirt', name: 'Sandbox T-shirt', client_id: SANDBOX_MERCHANT, amount: 25, currency: 'USD', statement_descriptor_suffix: 'TSHIRT' },
  { sku: 'hoodie', name: 'Sandbox hoodie', client_id: SANDBOX_MERCHANT, amount: 49.99, currency: 'USD', statement_descriptor_suffix: 'HOODIE' },
  { sku: 'poster', name: 'Sandbox poster', client_id: SANDBOX_MERCHANT, amount: 12.34, currency: 'EUR', statement_descriptor_suffix: 'POSTER' },
];

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
   * Refuses new requests (503), waits for the ones running, then stops the backend (SIGTERM: it finishes its
   * background reconciliations), all within {@link DRAIN_MS} before the backend is killed. The reconciliations call
   * the service's HTTP API, so this runs before the API stops listening.
   */
  stop(): Promise<void>;
}

/** How long stopping waits for the checkout's requests and reconciliations, as the HTTP API waits for its own. */
const DRAIN_MS = 10_000;

/** However late the stop, the backend gets this long to exit on SIGTERM before it is killed. */
const MIN_GRACE_MS = 1_000;

/** The backend process would not start (the partner was set up): its error is in the runtime's log. */
class BackendNotStarted extends Error {}

export const isSandboxPath = (pathname: string) => pathname === SANDBOX_PATH || pathname.startsWith(`${SANDBOX_PATH}/`);

interface SandboxBackend {
  child: BackendProcess;
  credentials: Credentials;
}

export function sandboxCheckout(options: SandboxCheckoutOptions): SandboxCheckout {
  const serviceUrl = `${options.apiOrigin}/api/v1`;
  const agent = backendAgent();
  const keeper = partnerKeeper(options.stateDir);
  let stopping = false;
  /** Every backend process started and not yet exited: a stop ends them all, a retired one included. */
  const processes = new Set<{ stop: BackendProcess['stop']; exited: Promise<void> }>();
  /**
   * Started on the first request; a failure is forgotten so the next request tries again, and so is a backend that
   * exited, and one whose key stopped working (revoked in the console): an answer of 502 (the service refused the
   * backend) has the key checked, and the next request then sets the checkout up anew.
   */
  let ready: Promise<SandboxBackend> | undefined;
  const backend = () => {
    if (ready !== undefined) return ready;
    const starting: Promise<SandboxBackend> = start().then(
      (started) => {
        void started.child.exited.then(() => {
          if (ready === starting) ready = undefined;
        });
        return started;
      },
      (error: unknown) => {
        if (ready === starting) ready = undefined;
        throw error;
      },
    );
    ready = starting;
    return starting;
  };
  async function start(): Promise<SandboxBackend> {
    const credentials = await sandboxPartner({ apiOrigin: options.apiOrigin, basePath: SANDBOX_PATH, adminToken: options.adminToken, keeper });
    if (stopping) throw new Error('The service is stopping');
    const child = await startBackendProcess(
      {
        serviceUrl,
        apiKey: credentials.api_key,
        hmacSecret: credentials.hmac_secret,
        partnerId: credentials.partner_id,
        webhookSecret: credentials.webhook_secret,
        basePath: SANDBOX_PATH,
        products: PRODUCTS,
        processorJsUrl: options.processorJsUrl,
      },
      (spawned) => {
        processes.add(spawned);
        void spawned.exited.then(() => processes.delete(spawned));
      },
    ).catch((error: unknown) => {
      throw new BackendNotStarted(error instanceof Error ? error.message : String(error));
    });
    return { child, credentials };
  }
  const recheck = async (used: Promise<SandboxBackend>) => {
    const { credentials, child } = await used;
    if (!(await keyStillWorks(credentials, options.apiOrigin).catch(() => true)) && ready === used) {
      ready = undefined;
      // Its requests still running are answered (SIGTERM stops it gracefully); new ones go to the next backend.
      void child.stop(DRAIN_MS);
    }
  };
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
        ({ child }) =>
          proxyRequest(request, response, { origin: child.origin, agent }, {
            onAnswer: (status) => {
              if (status === 502) void recheck(used).catch(() => undefined);
            },
            onUnreachable: (error) => {
              console.error('[sandbox-checkout] the sandbox backend did not answer', error);
              unavailable(response, 'The sandbox checkout backend is not answering; try again');
            },
          }),
        (error: unknown) => {
          const what = error instanceof BackendNotStarted ? 'start its backend' : 'set up its partner';
          console.error(`[sandbox-checkout] could not ${what}`, error);
          unavailable(response, `The sandbox checkout could not ${what}: ${error instanceof Error ? error.message : String(error)}`);
        },
      );
    },
    stop: async () => {
      stopping = true;
      const deadline = Date.now() + DRAIN_MS;
      await Promise.race([Promise.all(running), new Promise((resolve) => setTimeout(resolve, DRAIN_MS).unref())]);
      // A backend still starting is in `processes` already: it is stopped too.
      await Promise.all([...processes].map((started) => started.stop(Math.max(deadline - Date.now(), MIN_GRACE_MS))));
      agent.destroy();
    },
  };
}

function unavailable(response: ServerResponse, message: string): void {
  if (response.headersSent || response.destroyed) return;
  response
    .writeHead(503, { 'content-type': 'application/json', 'x-content-type-options': 'nosniff', 'retry-after': '1' })
    .end(JSON.stringify({ error: message, code: 'SERVICE_UNAVAILABLE' }));
}
