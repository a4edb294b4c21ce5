/**
 * The payout rails port over HTTP: the rail protocol of docs/rails.md, spoken to the rails configured by
 * environment (`RAIL_A_API_BASE`, `RAIL_B_API_BASE`; locally the sandbox rails of `infra/local/sandbox/rails/`).
 *
 * What each answer means for the money, and so for the port:
 * - 200 paid: the rail paid, now or earlier under this idempotency key → `paid`;
 * - 422 failed, 401 (the key was refused), 400 (the request was refused): nothing was paid, and the idempotency
 *   key is not consumed → `failed`;
 * - anything else (409 a key paid for another payout, 5xx, a redirect, an unreadable body, no answer in time, no
 *   connection) → {@link PayoutOutcomeUnknown}: the payout may have been made, and asking again under the same
 *   key finds out.
 * A payout that is never sent (a rail without base URL or key, keys that cannot be read, no time left) is
 * `failed` too: nothing was paid.
 *
 * The lookup (`findPaid`, `GET {base}/payouts/{key}`) is asked before paying again a batch an earlier attempt may
 * have paid, so that no retry relies on the rail still remembering the key: a 200 paid transfer → that transfer;
 * the protocol's 404 `{ error, idempotency_key }` naming that key → `null` (nothing paid under it). Everything else is
 * {@link PayoutOutcomeUnknown}, including a lookup that cannot be sent: unlike a payout, "not asked" is not
 * "nothing paid".
 *
 * Every call is bounded: by the deadline of the request it serves (`lib/deadline.ts`), less the time the use case
 * needs to record the outcome, and by {@link RAIL_CALL_TIMEOUT_MS}. The rail's key goes only into the
 * `Authorization` header: no message, reason or error here contains it, and nothing is logged.
 */
import * as z from 'zod';
import { timeLeftMs } from '../deadline';
import { toMajorUnits } from '../domain/money';
import { PayoutOutcomeUnknown, type PayoutRails, type PayoutRequest, type PayoutResult, type RailName } from '../use-cases/ports/payouts';
import type { LoadRailKeys } from './rail-keys';

/** The longest one rail call (a payout or a lookup) may take (the whole call when no request deadline applies: a scheduled run). */
export const RAIL_CALL_TIMEOUT_MS = 10_000;
/** Time kept after a call that got no answer for the use case to record the batch's outcome before the deadline. */
const ANSWER_MS = 1_000;
/** A rail's reason is kept on the batch; a longer one is cut. */
const MAX_REASON_LENGTH = 200;

const RAIL_NAMES: Record<RailName, string> = { railA: 'rail A', railB: 'rail B' };

const PaidTransfer = z.object({ status: z.literal('paid'), transfer_id: z.string().min(1) });
const FailedTransfer = z.object({ status: z.literal('failed'), transfer_id: z.string().min(1).nullish(), reason: z.string().nullish() });
const Refusal = z.object({ error: z.string() });
const NothingPaid = Refusal.extend({ idempotency_key: z.string() });

export interface HttpRailsOptions {
  /** Rail A's base URL (`POST {base}/payouts`); `undefined`: rail A is not configured. */
  railABase: string | undefined;
  railBBase: string | undefined;
  loadKeys: LoadRailKeys;
  /** The HTTP client (tests inject one); the global fetch by default. */
  fetch?: typeof fetch;
}

export function createHttpRails(options: HttpRailsOptions): PayoutRails {
  const send = options.fetch ?? fetch;
  const bases: Record<RailName, string | undefined> = { railA: options.railABase, railB: options.railBBase };

  /** Where and how to call `rail` now, or why it cannot be called (nothing is sent then). */
  async function target(rail: RailName): Promise<Target | { reason: string }> {
    let key: string | undefined;
    try {
      key = (await options.loadKeys())[rail];
    } catch {
      return { reason: 'the rail keys could not be read' };
    }
    const base = bases[rail];
    if (base === undefined || key === undefined) return { reason: `${RAIL_NAMES[rail]} is not configured` };
    const timeoutMs = callTimeoutMs(timeLeftMs());
    if (timeoutMs === undefined) return { reason: `no time left to call ${RAIL_NAMES[rail]} before the request deadline` };
    return { rail: RAIL_NAMES[rail], base: base.replace(/\/+$/, ''), key, timeoutMs };
  }

  /** One bounded call; rejects with {@link PayoutOutcomeUnknown} when no answer came. */
  async function call(to: Target, path: string, init: CallInit): Promise<{ status: number; text: string }> {
    const signal = AbortSignal.timeout(to.timeoutMs);
    try {
      const response = await send(`${to.base}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${to.key}`, ...init.headers },
        signal,
        // A redirect is an answer the protocol does not have (unknown outcome); following it would resend the key.
        redirect: 'manual',
      });
      return { status: response.status, text: await response.text() };
    } catch (error) {
      if (signal.aborted) throw new PayoutOutcomeUnknown(`${to.rail} did not answer within ${to.timeoutMs} ms`, { cause: error });
      throw new PayoutOutcomeUnknown(`${to.rail} could not be reached (${connectionError(error)})`, { cause: error });
    }
  }

  return {
    async pay(request: PayoutRequest): Promise<PayoutResult> {
      const to = await target(request.rail);
      // Not sent: nothing can have been paid.
      if (!('key' in to)) return failed(null, to.reason);
      const { status, text } = await call(to, '/payouts', {
        method: 'POST',
        headers: { 'idempotency-key': request.idempotencyKey, 'content-type': 'application/json' },
        body: JSON.stringify(payoutBody(request)),
      });
      return outcomeOf(to.rail, status, text);
    },

    async findPaid(lookup: { rail: RailName; idempotencyKey: string }): Promise<{ transferId: string } | null> {
      const to = await target(lookup.rail);
      // A lookup that cannot be asked cannot tell whether the rail paid: that is not "it paid nothing".
      if (!('key' in to)) throw new PayoutOutcomeUnknown(`cannot ask whether ${RAIL_NAMES[lookup.rail]} paid: ${to.reason}`);
      const { status, text } = await call(to, `/payouts/${encodeURIComponent(lookup.idempotencyKey)}`, { method: 'GET' });
      return paidTransferOf(to.rail, status, text, lookup.idempotencyKey);
    },
  };
}

interface CallInit {
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
}

/** A rail ready to be called: its display name, base URL (no trailing slash), key, and the call's timeout. */
interface Target {
  rail: string;
  base: string;
  key: string;
  timeoutMs: number;
}

/** The protocol's request body: the amount in major units, as the API shows money. */
const payoutBody = (request: PayoutRequest) => ({
  batch_id: request.batchId,
  amount: toMajorUnits(request.amountMinor, request.currency),
  currency: request.currency,
  partner_id: request.partnerId,
  client_id: request.clientId,
});

/** The timeout of one call with `timeLeft` ms to the request's deadline (`undefined` outside a request); `undefined`: no time for one. */
function callTimeoutMs(timeLeft: number | undefined): number | undefined {
  if (timeLeft === undefined) return RAIL_CALL_TIMEOUT_MS;
  const budget = Math.floor(timeLeft - ANSWER_MS);
  return budget < 1 ? undefined : Math.min(RAIL_CALL_TIMEOUT_MS, budget);
}

/** Maps the rail's answer (docs/rails.md, "Answers"). */
function outcomeOf(rail: string, status: number, text: string): PayoutResult {
  const body = parseJson(text);
  if (status === 200) {
    const paid = PaidTransfer.safeParse(body);
    if (paid.success) return { outcome: 'paid', transferId: paid.data.transfer_id };
    throw new PayoutOutcomeUnknown(`${rail} answered HTTP 200 with ${body === undefined ? 'a body that is not JSON' : 'a body that is not a paid transfer'}`);
  }
  if (status === 422) {
    const refused = FailedTransfer.safeParse(body);
    if (refused.success) {
      const reason = refused.data.reason ? `: ${clip(refused.data.reason)}` : '';
      return failed(refused.data.transfer_id ?? null, `${rail} refused the payout${reason}`);
    }
  }
  if (status === 401) return failed(null, `${rail} refused the credentials`);
  if (status === 400) {
    const refusal = Refusal.safeParse(body);
    return failed(null, `${rail} refused the request${refusal.success ? `: ${clip(refusal.data.error)}` : ''}`);
  }
  throw new PayoutOutcomeUnknown(`${rail} answered HTTP ${status}`);
}

/**
 * Maps the rail's answer to a lookup (docs/rails.md, "Lookup"): only a 200 paid transfer and the protocol's 404
 * `{ error, idempotency_key }` naming the very key asked about are answers; anything else cannot tell: a 404 page
 * from a proxy, a wrong base URL, or a rail without the lookup route (whose "no such route" must never read as
 * "nothing paid", which would pay the batch again).
 */
function paidTransferOf(rail: string, status: number, text: string, idempotencyKey: string): { transferId: string } | null {
  const body = parseJson(text);
  if (status === 200) {
    const paid = PaidTransfer.safeParse(body);
    if (paid.success) return { transferId: paid.data.transfer_id };
    throw new PayoutOutcomeUnknown(`${rail} answered HTTP 200 with ${body === undefined ? 'a body that is not JSON' : 'a body that is not a paid transfer'}`);
  }
  if (status === 404 && NothingPaid.safeParse(body).data?.idempotency_key === idempotencyKey) return null;
  throw new PayoutOutcomeUnknown(`${rail} answered HTTP ${status}`);
}

const failed = (transferId: string | null, reason: string): PayoutResult => ({ outcome: 'failed', transferId, reason });

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A rail's text as a single line of at most {@link MAX_REASON_LENGTH} characters. */
function clip(text: string): string {
  const line = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return line.length <= MAX_REASON_LENGTH ? line : `${line.slice(0, MAX_REASON_LENGTH - 1)}…`;
}

/** Why fetch got no answer, as a code (`ECONNREFUSED`, `ENOTFOUND`): never the request, which holds the key. */
function connectionError(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  const code = (cause as NodeJS.ErrnoException | undefined)?.code ?? (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : 'connection failed';
}
