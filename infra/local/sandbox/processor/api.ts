/**
 * The processor sandbox's HTTP side: Stripe's authentication (the secret key, or the publishable key for what a
 * browser may do: `keys.ts`, `publishable.ts`), routing, idempotent requests,
 * answers in Stripe's shape (pretty-printed JSON, `request-id`, `stripe-version`; `nosniff` on every answer), and
 * what browsers get besides (CORS, the Stripe.js stand-in: `browser.ts`).
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { decodePathSegment } from '../../../../lib/routes';
import { readBody } from '../../http-server';
import { browserAnswer, corsHeaders } from './browser';
import { closeDispute, createDispute, createRefund } from './charges';
import { ApiError, invalidRequest } from './errors';
import { randomId, SANDBOX_API_VERSION, type EventDispatcher, type ProcessorEvent } from './events';
import { canonical, malformed, parseForm, type FormHash, type FormValue } from './form';
import { checkIdempotencyKey, type IdempotencyKeys } from './idempotency';
import { cancelIntent, confirmIntent, createIntent, retrieveIntent, type ApiResult, type RequestContext } from './intents';
import type { ApiKeys, Caller } from './keys';
import type { SandboxObjects } from './objects';
import { publishableBody, publishableKeyRefused, publishableRefusal, withClientSecretChecked } from './publishable';

/** Larger request bodies are refused (413); the service's requests are a few hundred bytes. */
const MAX_BODY_BYTES = 1024 * 1024;
/** On every answer: a browser takes each for the type it declares (JSON, the stand-in's JavaScript), never sniffs another. */
const NOSNIFF = { 'x-content-type-options': 'nosniff' } as const;

type Route =
  | { kind: 'events' }
  | { kind: 'drop_events' }
  | { kind: 'redeliver_event'; id: string }
  | { kind: 'create_intent' }
  | { kind: 'retrieve_intent'; id: string }
  | { kind: 'confirm_intent'; id: string }
  | { kind: 'cancel_intent'; id: string }
  | { kind: 'create_refund' }
  | { kind: 'dispute'; id: string }
  | { kind: 'close_dispute'; id: string };

function route(method: string, path: string): Route | undefined {
  if (method === 'GET' && path === '/sandbox/events') return { kind: 'events' };
  if (method === 'POST' && path === '/sandbox/events/drop') return { kind: 'drop_events' };
  const redeliver = /^\/sandbox\/events\/([^/]+)\/deliver$/.exec(path);
  if (method === 'POST' && redeliver !== null) return { kind: 'redeliver_event', id: decodePathSegment(redeliver[1] ?? '') };
  if (method === 'POST' && path === '/v1/payment_intents') return { kind: 'create_intent' };
  if (method === 'POST' && path === '/v1/refunds') return { kind: 'create_refund' };
  const intent = /^\/v1\/payment_intents\/([^/]+)(?:\/(confirm|cancel))?$/.exec(path);
  if (intent !== null) {
    const id = decodePathSegment(intent[1] ?? '');
    if (method === 'GET' && intent[2] === undefined) return { kind: 'retrieve_intent', id };
    if (method === 'POST' && intent[2] === 'confirm') return { kind: 'confirm_intent', id };
    if (method === 'POST' && intent[2] === 'cancel') return { kind: 'cancel_intent', id };
  }
  const dispute = /^\/sandbox\/payment_intents\/([^/]+)\/dispute$/.exec(path);
  if (method === 'POST' && dispute !== null) return { kind: 'dispute', id: decodePathSegment(dispute[1] ?? '') };
  const closing = /^\/sandbox\/disputes\/([^/]+)\/close$/.exec(path);
  if (method === 'POST' && closing !== null) return { kind: 'close_dispute', id: decodePathSegment(closing[1] ?? '') };
  return undefined;
}

type HandlerRoute = Exclude<Route, { kind: 'events' | 'drop_events' | 'redeliver_event' }>;

/** An authenticated request to a handler, with its parameters (`key` taken out). */
interface ApiRequest {
  method: string;
  path: string;
  matched: HandlerRoute;
  form: FormHash;
  caller: Caller;
  idempotencyKey: string | undefined;
}

interface Answer {
  status: number;
  body: string;
  headers: Record<string, string>;
}

/**
 * Answers one HTTP request as Stripe would: authenticates it, routes it, replays or stores it under its
 * idempotency key, runs its handler, and answers only once the handler's changes are saved.
 */
export class Api {
  constructor(
    private readonly keys: ApiKeys,
    /** The Stripe.js stand-in's source (`GET /v3`). */
    private readonly stripeJs: Buffer,
    private readonly objects: SandboxObjects,
    private readonly idempotency: IdempotencyKeys,
    private readonly dispatcher: EventDispatcher,
    /** Resolves once every change made so far is saved (at once without a state directory). */
    private readonly save: () => Promise<void>,
  ) {}

  async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const forBrowser = browserAnswer((req.method ?? 'GET').toUpperCase(), req.url, this.stripeJs);
    if (forBrowser !== undefined) {
      req.resume();
      res.writeHead(forBrowser.status, { ...NOSNIFF, ...forBrowser.headers }).end(forBrowser.body);
      return;
    }
    const requestId = randomId('req_', 14);
    const emitted: string[] = [];
    let answer: Answer;
    try {
      answer = await this.answer(req, requestId, emitted);
    } catch (error) {
      if (error instanceof ApiError) {
        answer = { status: error.status, body: json({ error: error.body }), headers: {} };
      } else {
        // Also a state that could not be saved: as at Stripe, a 500 leaves the outcome open, and a retry under
        // the same idempotency key answers what the request did.
        console.error('[processor-sandbox] request failed', error);
        answer = { status: 500, body: json({ error: { type: 'api_error', message: `The processor sandbox failed: ${String(error)}` } }), headers: {} };
      }
    }
    const idempotencyKey = header(req.headers, 'idempotency-key');
    const body = Buffer.from(answer.body, 'utf8');
    res.writeHead(answer.status, {
      'content-type': 'application/json',
      'content-length': body.length,
      ...NOSNIFF,
      'request-id': requestId,
      'stripe-version': header(req.headers, 'stripe-version') ?? SANDBOX_API_VERSION,
      ...(idempotencyKey !== undefined ? { 'idempotency-key': idempotencyKey } : {}),
      ...corsHeaders(req.url),
      ...answer.headers,
    });
    // Like Stripe, deliver the events of this request only after answering it ('close': sent or aborted).
    if (emitted.length > 0) res.once('close', () => this.dispatcher.deliver(emitted));
    res.end(body);
  }

  private async answer(req: IncomingMessage, requestId: string, emitted: string[]): Promise<Answer> {
    const method = (req.method ?? 'GET').toUpperCase();
    const { path, query } = requestTarget(req.url);
    const raw = await readBody(req, MAX_BODY_BYTES);
    if (raw === 'too-large') throw invalidRequest(`Request body too large (limit ${MAX_BODY_BYTES} bytes).`, { status: 413 });
    const matched = route(method, path);
    // A POST's parameters are its form body; a GET's are its query string, as the SDK and Stripe.js send them.
    const readForm = () => parseForm(method === 'POST' ? formBody(req.headers, raw) : query);
    const isApi = path === '/v1' || path.startsWith('/v1/') || path.startsWith('/sandbox/');
    const caller = isApi ? this.keys.authenticate(header(req.headers, 'authorization'), () => keyParameter(readForm)) : undefined;
    if (matched === undefined || caller === undefined) {
      throw invalidRequest(
        `Unrecognized request URL (${method}: ${path}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`,
        { status: 404 },
      );
    }
    if (matched.kind === 'events' || matched.kind === 'drop_events' || matched.kind === 'redeliver_event') {
      // The events carry every intent's client_secret, metadata and receipt_email: the secret key's alone.
      if (caller.kind !== 'secret') throw publishableKeyRefused();
      return this.eventsAdmin(matched, readForm);
    }
    const form = readForm();
    delete form.key; // the publishable key, as Stripe.js sends it: authentication's, not the handler's
    const request: ApiRequest = { method, path, matched, form, caller, idempotencyKey: method === 'POST' ? header(req.headers, 'idempotency-key') : undefined };
    if (caller.kind === 'secret') return this.respond(request, requestId, emitted);
    try {
      return await this.respond(request, requestId, emitted);
    } catch (error) {
      // A refusal of a confirm carries the intent: the browser sees it as it sees any intent.
      throw error instanceof ApiError ? publishableRefusal(error) : error;
    }
  }

  /** The sandbox-only routes about its events: list them, drop new ones (or stop), send one late. */
  private eventsAdmin(matched: Exclude<Route, HandlerRoute>, readForm: () => FormHash): Answer {
    if (matched.kind === 'events') return { status: 200, body: json({ data: this.dispatcher.list() }), headers: {} };
    if (matched.kind === 'drop_events') {
      const enabled = readForm().enabled;
      if (enabled !== 'true' && enabled !== 'false') throw invalidRequest('enabled must be true or false.', { param: 'enabled' });
      this.dispatcher.setDropping(enabled === 'true');
      return { status: 200, body: json({ dropping: this.dispatcher.droppingEvents }), headers: {} };
    }
    if (!this.dispatcher.redeliver(matched.id)) {
      throw invalidRequest(`No dropped or failed event ${matched.id}: only those can be sent again.`, { status: 404 });
    }
    return { status: 200, body: json({ id: matched.id, redelivering: true }), headers: {} };
  }

  /** Refuses what the caller's key may not do, then runs the request once per idempotency key. */
  private async respond(request: ApiRequest, requestId: string, emitted: string[]): Promise<Answer> {
    const { method, matched, caller, idempotencyKey } = request;
    let form = request.form;
    if (caller.kind === 'publishable') {
      if (matched.kind !== 'retrieve_intent' && matched.kind !== 'confirm_intent') throw publishableKeyRefused();
      form = withClientSecretChecked(this.objects, matched.id, form);
    }
    if (idempotencyKey === undefined) {
      const answer = this.run(matched, form, caller, requestId, null, emitted);
      // Every POST may have changed something (a GET changes nothing): it is answered once that is saved.
      if (method === 'POST') await this.save();
      return answer;
    }

    checkIdempotencyKey(idempotencyKey);
    const scope = `${caller.scope}:${idempotencyKey}`;
    const endpoint = `${method} ${request.path}`;
    const fingerprint = canonical(form);
    const stored = this.idempotency.replay(scope, idempotencyKey, endpoint, fingerprint);
    if (stored !== undefined) {
      await this.save(); // the first request's changes may still be on their way to disk
      return { status: stored.status, body: stored.body, headers: { 'idempotent-replayed': 'true', 'original-request': stored.requestId } };
    }
    const answer = this.run(matched, form, caller, requestId, idempotencyKey, emitted);
    // Reached only when the handler ran (refusals throw): its result is what the key replays from now on.
    this.idempotency.store({ scope, endpoint, fingerprint, status: answer.status, body: answer.body, requestId, storedAt: Date.now() });
    await this.save();
    return answer;
  }

  /** Runs a handler synchronously, so requests never interleave and an idempotency key is never in use twice. */
  private run(matched: HandlerRoute, form: FormHash, caller: Caller, requestId: string, idempotencyKey: string | null, emitted: string[]): Answer {
    const context: RequestContext = {
      emit: (type, object, options) => {
        const fromApi = options?.fromApiRequest ?? true;
        const event: ProcessorEvent = this.dispatcher.create(type, object, {
          id: fromApi ? requestId : null,
          idempotency_key: fromApi ? idempotencyKey : null,
        });
        emitted.push(event.id);
      },
    };
    let result: ApiResult;
    switch (matched.kind) {
      case 'create_intent':
        result = createIntent(this.objects, form);
        break;
      case 'retrieve_intent':
        result = retrieveIntent(this.objects, matched.id, form);
        break;
      case 'confirm_intent':
        result = confirmIntent(this.objects, matched.id, form, context);
        break;
      case 'cancel_intent':
        result = cancelIntent(this.objects, matched.id, form, context);
        break;
      case 'create_refund':
        result = createRefund(this.objects, form, context);
        break;
      case 'dispute':
        result = createDispute(this.objects, matched.id, form, context);
        break;
      case 'close_dispute':
        result = closeDispute(this.objects, matched.id, form, context);
        break;
    }
    // The events carry the whole objects (they go to the service); the browser reads what Stripe shows it.
    const body = caller.kind === 'publishable' ? publishableBody(result.body) : result.body;
    return { status: result.status, body: json(body), headers: {} };
  }
}

/** The `key` parameter, when the parameters can be read and it is a non-empty string; else none. */
function keyParameter(readForm: () => FormHash): string | undefined {
  let key: FormValue | undefined;
  try {
    key = readForm().key;
  } catch (error) {
    if (error instanceof ApiError) return undefined; // unreadable parameters: answered as a request without a key
    throw error;
  }
  return typeof key === 'string' && key !== '' ? key : undefined;
}

function requestTarget(url: string | undefined): { path: string; query: string } {
  const target = url ?? '/';
  if (!target.startsWith('/')) throw invalidRequest(`Invalid request target: ${target}`);
  const queryStart = target.indexOf('?');
  return queryStart === -1 ? { path: target, query: '' } : { path: target.slice(0, queryStart), query: target.slice(queryStart + 1) };
}

function formBody(headers: IncomingHttpHeaders, raw: Buffer): string {
  if (raw.length === 0) return '';
  const contentType = (header(headers, 'content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (contentType !== 'application/x-www-form-urlencoded') {
    throw malformed(`the content type is "${contentType || 'missing'}"`);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch {
    throw malformed('the body is not valid UTF-8');
  }
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function json(value: unknown): string {
  // Stripe answers with pretty-printed JSON.
  return `${JSON.stringify(value, null, 2)}\n`;
}

