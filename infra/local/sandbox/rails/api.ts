/**
 * The sandbox rails' HTTP side: routing, each rail's bearer key, the payout request's checks, and answers in the
 * rail protocol's shapes (docs/rails.md). Every refusal is JSON `{ "error": "<message>" }` and pays nothing.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { normalizeCurrency, toMinorUnits, type CurrencyCode } from '../../../../lib/domain/money';
import { readBody } from '../../http-server';
import type { Attempt, PayoutInput, RailLedger, TransferRecord } from './ledger';

/** Larger request bodies are refused (413); a payout is about 150 bytes. */
export const MAX_BODY_BYTES = 64 * 1024;
const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

export const RAIL_PATHS = ['rail-a', 'rail-b'] as const;
export type RailPath = (typeof RAIL_PATHS)[number];

type Route = { rail: RailPath; action: 'payouts' | 'fail-next' | 'transfers' } | { rail: RailPath; action: 'payout'; key: string };

const METHOD_OF: Record<Route['action'], string> = { payouts: 'POST', payout: 'GET', 'fail-next': 'POST', transfers: 'GET' };

class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

interface Answer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

const Text = (name: string) =>
  z.string({ error: `${name} must be a string` }).min(1, `${name} must not be empty`).max(255, `${name} must be at most 255 characters`);
const PayoutBody = z.object({
  batch_id: Text('batch_id'),
  amount: z.unknown(),
  currency: z.unknown(),
  partner_id: Text('partner_id'),
  client_id: Text('client_id'),
});

export class RailsApi {
  private readonly keyDigests: Record<RailPath, Buffer>;

  constructor(
    keys: Record<RailPath, string>,
    private readonly ledgers: Record<RailPath, RailLedger>,
    /** Resolves once every change made so far is saved (at once without a state directory). */
    private readonly save: () => Promise<void>,
  ) {
    this.keyDigests = { 'rail-a': digest(keys['rail-a']), 'rail-b': digest(keys['rail-b']) };
  }

  async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let answer: Answer;
    try {
      answer = await this.answer(req);
    } catch (error) {
      if (error instanceof Refusal) {
        answer = { status: error.status, body: { error: error.message }, headers: error.headers };
      } else {
        // A state that could not be saved: the attempt's outcome stays open, as at a real rail's 5xx.
        console.error('[rails-sandbox] request failed', error);
        answer = { status: 500, body: { error: 'The sandbox rails failed; the outcome of this request is unknown' } };
      }
    }
    const body = Buffer.from(JSON.stringify(answer.body), 'utf8');
    // nosniff: a browser opening a control route takes the answer as JSON, never as a page.
    res.writeHead(answer.status, { 'content-type': 'application/json', 'content-length': body.length, 'x-content-type-options': 'nosniff', ...answer.headers });
    res.end(body);
  }

  private async answer(req: IncomingMessage): Promise<Answer> {
    const raw = await readBody(req, MAX_BODY_BYTES);
    if (raw === 'too-large') throw new Refusal(413, `Request body too large (limit ${MAX_BODY_BYTES} bytes)`);
    const method = (req.method ?? 'GET').toUpperCase();
    const path = new URL(req.url ?? '/', 'http://rails.local').pathname;
    const route = routeOf(path);
    if (route === undefined) throw new Refusal(404, `No such route: ${method} ${path}`);
    const allowed = METHOD_OF[route.action];
    if (method !== allowed) throw new Refusal(405, `Use ${allowed} on ${path}`, { allow: allowed });
    const ledger = this.ledgers[route.rail];

    switch (route.action) {
      case 'transfers':
        return { status: 200, body: { items: ledger.list() } };
      case 'fail-next':
        ledger.setFailNext();
        await this.save();
        return { status: 200, body: { fail_next: true } };
      case 'payouts': {
        this.authenticate(route.rail, req.headers);
        const key = idempotencyKey(req.headers);
        const payout = payoutOf(req.headers, raw);
        return ledger.serialise(key, async () => {
          const attempt = ledger.attempt(key, payout);
          await this.save();
          return answerOf(attempt);
        });
      }
      case 'payout': {
        // The lookup: answered after any payout in flight under the key, so it never misses one being made.
        this.authenticate(route.rail, req.headers);
        const key = checkedKey(pathSegment(route.key));
        return ledger.serialise(key, async () => {
          const paid = ledger.paid(key);
          if (paid === undefined) return { status: 404, body: { error: `No payout was paid under Idempotency-Key ${key}`, idempotency_key: key } };
          return { status: 200, body: transferBody(paid) };
        });
      }
    }
  }

  private authenticate(rail: RailPath, headers: IncomingHttpHeaders): void {
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header(headers, 'authorization') ?? '');
    if (bearer === null) throw new Refusal(401, 'Missing API key: send Authorization: Bearer <rail API key>');
    if (!timingSafeEqual(digest(bearer[1] ?? ''), this.keyDigests[rail])) throw new Refusal(401, `Invalid API key for ${rail}`);
  }
}

function routeOf(path: string): Route | undefined {
  const lookup = /^\/(rail-a|rail-b)\/payouts\/([^/]+)$/.exec(path);
  if (lookup !== null) return { rail: lookup[1] as RailPath, action: 'payout', key: lookup[2] ?? '' };
  const match = /^\/(rail-a|rail-b)\/(payouts|fail-next|transfers)$/.exec(path);
  if (match === null) return undefined;
  return { rail: match[1] as RailPath, action: match[2] as 'payouts' | 'fail-next' | 'transfers' };
}

function answerOf(attempt: Attempt): Answer {
  const { transfer } = attempt;
  switch (attempt.kind) {
    case 'paid':
      return { status: 200, body: transferBody(transfer) };
    case 'replay':
      return { status: 200, body: transferBody(transfer), headers: { 'idempotent-replayed': 'true' } };
    case 'failed':
      return { status: 422, body: { ...transferBody(transfer), reason: transfer.reason } };
    case 'conflict':
      throw new Refusal(409, `Idempotency-Key ${transfer.idempotency_key} already paid another payout (transfer ${transfer.transfer_id})`);
  }
}

const transferBody = (transfer: TransferRecord) => ({
  transfer_id: transfer.transfer_id,
  batch_id: transfer.batch_id,
  amount: transfer.amount,
  currency: transfer.currency,
  status: transfer.status,
});

/** 1-255 printable ASCII characters: an empty key would be one key shared by every request that sends it. */
function idempotencyKey(headers: IncomingHttpHeaders): string {
  const key = header(headers, 'idempotency-key') ?? '';
  if (key === '') throw new Refusal(400, 'Missing Idempotency-Key header');
  return checkedKey(key);
}

/** `key` when it is one a payout could have been made under; else a 400. */
function checkedKey(key: string): string {
  if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(key)) {
    throw new Refusal(400, `Idempotency-Key must be 1-${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters`);
  }
  return key;
}

/** A path segment, percent-decoded (the lookup's key). */
function pathSegment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new Refusal(400, 'The idempotency key in the path is not valid percent-encoding');
  }
}

function payoutOf(headers: IncomingHttpHeaders, raw: Buffer): PayoutInput {
  const contentType = (header(headers, 'content-type') ?? '').split(';')[0]?.trim().toLowerCase();
  if (contentType !== 'application/json') throw new Refusal(400, 'The body must be application/json');
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(raw));
  } catch {
    throw new Refusal(400, 'The body is not valid JSON');
  }
  const parsed = PayoutBody.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Refusal(400, issue?.path.length === 0 ? 'The body must be a JSON object' : (issue?.message ?? 'Invalid payout'));
  }
  const { amount, currency: code } = parsed.data;
  const currency = typeof code === 'string' ? normalizeCurrency(code) : undefined;
  if (currency === undefined || currency !== code) throw new Refusal(400, 'currency must be an active ISO 4217 code in upper case (e.g. USD)');
  if (typeof amount !== 'number' || !Number.isFinite(amount) || amount <= 0) throw new Refusal(400, 'amount must be a positive number (major units)');
  checkDecimals(amount, currency);
  return { ...parsed.data, amount, currency };
}

function checkDecimals(amount: number, currency: CurrencyCode): void {
  let minor: number | undefined;
  try {
    minor = toMinorUnits(amount, currency);
  } catch {
    throw new Refusal(400, 'amount is too large');
  }
  if (minor === undefined) throw new Refusal(400, `amount has more decimal places than ${currency} has`);
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function digest(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}
