/**
 * The local SANDBOX RAILS: payout rails A and B on one HTTP server (`RAILS_SANDBOX_PORT`, default 12112), speaking
 * the rail protocol of docs/rails.md, so the service's own HTTP adapter (`lib/payouts/http-rails.ts`) pays through
 * them exactly as it pays through a real rail.
 *
 * Served, for each rail (`rail-a`, `rail-b`, each with its own key):
 *   POST /rail-x/payouts       the protocol: Authorization: Bearer <key>, Idempotency-Key, a JSON payout
 *   GET  /rail-x/payouts/:key  the lookup (same key): 200 the transfer paid under that idempotency key, or 404
 * and the control routes of decisions.md §1 (no key: for people and acceptance suites):
 *   POST /rail-x/fail-next     that rail's next payout attempt fails (422), once
 *   GET  /rail-x/transfers     { items: [{ transfer_id, batch_id, amount, currency, status }] }, one per attempt
 *
 * With `stateDir`, every transfer, paid key and pending fail-next survives a restart (`state.ts`):
 * each request that changed something is answered only once its change is on disk.
 *
 * The parts: `api` (HTTP, keys, request checks), `ledger` (one rail's transfers and idempotency rules), `state`
 * (the state file).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeGracefully, listen } from '../../http-server';
import { RailsApi, type RailPath } from './api';
import { RailLedger, type TransferItem } from './ledger';
import { loadRailsState, RAILS_STATE_VERSION, type RailsState } from './state';
import { StateFile } from '../state-file';

export type { RailPath } from './api';
export type { TransferItem } from './ledger';

/** The keys the service's local configuration sends (lib/config.ts). */
export const SANDBOX_RAIL_KEYS = { railA: 'rail_a_sandbox_local', railB: 'rail_b_sandbox_local' } as const;

/** How long closing waits for requests in flight (a payout being saved is answered, not cut). */
const CLOSE_GRACE_MS = 5_000;

export interface RailsSandboxOptions {
  port: number;
  /** Default 127.0.0.1: the control routes take no key. */
  host?: string;
  /** The key each rail accepts (`Authorization: Bearer <key>`). */
  keys: { railA: string; railB: string };
  /** Where the rails keep their state; undefined: memory only (`npm start -- --in-memory`). */
  stateDir?: string | undefined;
}

export interface RailsSandbox {
  /** Base URL, e.g. `http://127.0.0.1:12112`; rail A is at `${url}/rail-a`. */
  url: string;
  port: number;
  /** Every payout attempt on `rail`, oldest first. */
  transfers(rail: RailPath): TransferItem[];
  /** Stops the server (requests in flight are answered) and saves the state. */
  close(): Promise<void>;
}

/**
 * Starts the rails and resolves once they listen. Rejects on an empty key, a state file it cannot read (rather
 * than start empty over it, forgetting paid keys), or a port in use.
 */
export async function startRailsSandbox(options: RailsSandboxOptions): Promise<RailsSandbox> {
  for (const [rail, key] of Object.entries(options.keys)) {
    if (key.trim() === '') throw new Error(`sandbox rails: the key of ${rail} must not be empty`);
  }
  const saved = options.stateDir === undefined ? undefined : await loadRailsState(options.stateDir);
  const ledgers: Record<RailPath, RailLedger> = {
    'rail-a': new RailLedger('tr_a_', saved?.['rail-a']),
    'rail-b': new RailLedger('tr_b_', saved?.['rail-b']),
  };
  const stateFile =
    options.stateDir === undefined
      ? undefined
      : new StateFile<RailsState>(options.stateDir, RAILS_STATE_VERSION, () => ({ 'rail-a': ledgers['rail-a'].save(), 'rail-b': ledgers['rail-b'].save() }));
  const save = async () => {
    await stateFile?.save();
  };
  const api = new RailsApi({ 'rail-a': options.keys.railA, 'rail-b': options.keys.railB }, ledgers, save);
  const server = createServer((req, res) => {
    api.serve(req, res).catch((error: unknown) => {
      // Only a failure to write the response gets here; the request's own errors are answered in serve().
      console.error('[rails-sandbox] could not answer', error);
      res.destroy();
    });
  });
  server.keepAliveTimeout = 5_000;
  const host = options.host ?? '127.0.0.1';
  try {
    await listen(server, options.port, host);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    throw new Error(
      `Port ${options.port} (RAILS_SANDBOX_PORT) is already in use: another \`npm start\`, or another program. Stop it, or set RAILS_SANDBOX_PORT to a free port.`,
    );
  }
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    transfers: (rail) => ledgers[rail].list(),
    close: async () => {
      await closeGracefully(server, { graceMs: CLOSE_GRACE_MS });
      await save();
    },
  };
}
