/**
 * The access-control steps of the chain (interface-spec.md Authentication; decisions.md §2-4), in the order
 * `chain.ts` uses them on a partner mutation:
 *
 *   API key -> HMAC over the raw body -> rate limit -> idempotency-key present -> idempotency
 *
 * The rate limit counts only requests whose key and signature are valid, so a leaked key alone cannot spend a
 * partner's quota (decisions.md §3). Reads use the API key step only; admin routes use the admin token step only.
 */
import { createHash, randomInt, randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { authenticateAdmin, createAdminTokenVerifier } from '../auth/admin-token';
import { hashApiKey, signatureMatches } from '../auth/credentials';
import { config } from '../config';
import { assertActsFor } from '../domain/caller';
import { isPartnerId } from '../domain/ids';
import type { PayeeIds } from '../domain/partner';
import { rateWindowOf } from '../domain/rate-limit';
import { errors, fieldValidationError, ServiceError } from '../domain/errors';
import { countMetric, logger } from '../observability';
import { SECRET_PURPOSE } from '../domain/sealed-secret';
import type { StoredResponse } from '../domain/idempotency';
import { type ChainRequest, type ChainStep, stepAnswering } from './middlewares';
import type { PartnerReader } from '../use-cases/ports/partner-readers';
import type { HttpPorts, IdempotencyRecords } from './ports';
import { errorResult, toHttpResponse } from './response';
import { clientIdentifier } from './schemas';
import type { IdempotencyLease, RequestState } from './types';

/** `Authorization: Bearer <jwt>` with `role: admin`. The verifier is built at cold start. */
export function adminToken(): ChainStep {
  const verify = createAdminTokenVerifier(config);
  return stepAnswering(['ADMIN_TOKEN_INVALID', 'ADMIN_FORBIDDEN'], {
    before: async (request: ChainRequest) => {
      const admin = await authenticateAdmin(verify, request.event.headers.authorization);
      request.context.svc.caller = { kind: 'admin', subject: admin.subject };
      logger.appendKeys({ admin_subject: admin.subject });
    },
  });
}

/**
 * `x-api-key`: 401 API_KEY_MISSING / API_KEY_INVALID; a partner key brings its partner (404
 * PARTNER_NOT_FOUND if it no longer exists); `partnerOnly` routes refuse platform keys (403).
 */
export function apiKey(options: { partnerOnly: boolean; prefetchPayee: boolean }, ports: Pick<HttpPorts, 'apiKeys' | 'partners'>): ChainStep {
  return stepAnswering(['API_KEY_MISSING', 'API_KEY_INVALID', 'API_KEY_SCOPE_FORBIDDEN', 'PARTNER_NOT_FOUND'], {
    before: async (request: ChainRequest) => {
      const { svc } = request.context;
      const presented = request.event.headers['x-api-key'];
      if (presented === undefined || presented.trim() === '') throw errors.apiKeyMissing();
      const keyHash = hashApiKey(presented.trim());
      const named = options.prefetchPayee ? namedPayee(svc) : undefined;
      const { apiKey: stored, payee } =
        named === undefined ? { apiKey: await ports.apiKeys.findApiKey(keyHash), payee: undefined } : await ports.apiKeys.findApiKeyAndPayee(keyHash, named);
      if (stored === undefined) throw errors.apiKeyInvalid();
      svc.apiKey = stored;
      svc.payee = payee;
      logger.appendKeys({ key_id: stored.keyId, ...(stored.partnerId === undefined ? {} : { partner_id: stored.partnerId }) });
      if (stored.scope === 'platform') {
        if (options.partnerOnly) throw errors.apiKeyScopeForbidden('This route needs a partner-scoped API key');
        svc.caller = { kind: 'platform', keyId: stored.keyId };
        return;
      }
      // The key's own partner: read with the key when the body names it (the usual case), else now.
      const partner = stored.partnerId === undefined ? undefined : await partnerOf(ports.partners, svc, stored.partnerId);
      if (partner === undefined) throw errors.partnerNotFound();
      svc.caller = { kind: 'partner', keyId: stored.keyId, partner };
    },
  });
}

/**
 * The payee a payment body names, read from the raw body before it is validated: only ids of the shape the
 * body's schema takes (a partner id, a client id without `#`), so the read can only be of a partner and one of
 * its clients. Anything else names none (the body then fails validation anyway).
 */
function namedPayee(svc: RequestState): PayeeIds | undefined {
  const { partner_id: partnerId, client_id: clientId } = namedIds(svc);
  if (!isPartnerId(partnerId) || !clientIdentifier.safeParse(clientId).success) return undefined;
  return { partnerId, clientId: clientId as string };
}

/**
 * The `partner_id` and `client_id` the raw body names, before it is validated (the JSON step parses it after
 * the access steps): parsed once for the payee read and the mutation's owner. A body that is no JSON object names none.
 */
function namedIds(svc: RequestState): { partner_id?: unknown; client_id?: unknown } {
  if (svc.namedIds === undefined) {
    try {
      const body = JSON.parse(svc.rawBody) as { partner_id?: unknown; client_id?: unknown } | null;
      svc.namedIds = { partner_id: body?.partner_id, client_id: body?.client_id };
    } catch {
      svc.namedIds = {};
    }
  }
  return svc.namedIds;
}

/** Partner `partnerId`, from the payee read with the key when it is that one, else from the table. */
const partnerOf = (partners: PartnerReader, svc: RequestState, partnerId: string) =>
  svc.payee?.partnerId === partnerId ? svc.payee.partner : partners.getPartner(partnerId);

/**
 * The partner a mutation acts for, which owns its rate-limit quota and its idempotency keys (decisions.md §4:
 * keyed by partner): the key's partner, or for a platform key the body's `partner_id` (read here, before the
 * body is validated; a body without one stays with the key itself, and fails validation later anyway).
 */
function ownerOf(svc: RequestState): string {
  svc.owner ??= actingPartner(svc);
  return svc.owner;
}

function actingPartner(svc: RequestState): string {
  const { caller } = svc;
  if (caller.kind === 'partner') return caller.partner.partnerId;
  if (caller.kind !== 'platform') throw new Error(`no owner for a ${caller.kind} caller`);
  const partnerId = namedIds(svc).partner_id;
  return isPartnerId(partnerId) ? partnerId : `platform:${caller.keyId}`;
}

/**
 * Per partner, a fixed one-minute window: 429 RATE_LIMITED with `Retry-After` past the limit. Follows
 * {@link hmacSignature}: only authenticated requests count. A high limit's window is split into counters
 * (`lib/domain/rate-limit.ts`): each request counts on one at random.
 */
export function rateLimit(ports: Pick<HttpPorts, 'rateLimit' | 'partners'>): ChainStep {
  return stepAnswering(['RATE_LIMITED'], {
    before: async (request: ChainRequest) => {
      const { svc } = request.context;
      const window = rateWindowOf(await rateLimitOf(ports.partners, svc));
      const nowSeconds = ports.rateLimit.now() / 1000;
      const windowStartMinute = Math.floor(nowSeconds / 60);
      const counter = window.counters === 1 ? 0 : randomInt(window.counters);
      const count = await ports.rateLimit.countRequest(ownerOf(svc), windowStartMinute, counter);
      if (count > window.shareOf(counter)) {
        countMetric('RateLimited');
        throw errors.rateLimited((windowStartMinute + 1) * 60 - nowSeconds);
      }
    },
  });
}

/**
 * The limit of the partner a mutation acts for (decisions.md §3): a partner key brought its partner; a platform
 * key is held to the limit of the partner its body names, read here (once, and only once the signature is
 * valid). A platform key whose body names no partner is its own owner, which no partner record matches: the
 * default applies (and the body fails validation later anyway).
 */
async function rateLimitOf(partners: PartnerReader, svc: RequestState): Promise<number> {
  const owner = ownerOf(svc);
  // No read for an owner that cannot be a partner (a platform key whose body names none).
  const partner = svc.caller.kind === 'partner' ? svc.caller.partner : isPartnerId(owner) ? await partnerOf(partners, svc, owner) : undefined;
  return partner?.rateLimitPerMinute ?? config.RATE_LIMIT_PER_MINUTE;
}

/**
 * A partner key acts for its own partner only, whatever the route does with the query (decisions.md §5: a body
 * or query `partner_id` naming another partner is 403 API_KEY_SCOPE_FORBIDDEN): a `partner_id` in the query
 * string naming another is refused here for every route, those that read it and those that ignore it alike.
 */
export function queryPartnerScope(): ChainStep {
  return stepAnswering(['API_KEY_SCOPE_FORBIDDEN'], {
    before: (request: ChainRequest) => {
      const named = request.event.queryStringParameters?.partner_id;
      assertActsFor(request.context.svc.caller, named);
      return undefined;
    },
  });
}

/** `x-svc-hmac`: HMAC-SHA256 of the exact raw body with the key's secret, compared in constant time. */
export function hmacSignature(ports: Pick<HttpPorts, 'secrets'>): ChainStep {
  return stepAnswering(['HMAC_MISSING', 'HMAC_INVALID'], {
    before: async (request: ChainRequest) => {
      const received = request.event.headers['x-svc-hmac'];
      if (received === undefined || received.trim() === '') throw errors.hmacMissing();
      const { apiKey: stored, rawBody } = request.context.svc;
      if (stored === undefined) throw new Error('hmacSignature() must follow apiKey()');
      const secret = await ports.secrets.open(stored.hmacSecret, SECRET_PURPOSE.hmac);
      if (!signatureMatches(secret, rawBody, received.trim())) throw errors.hmacInvalid();
    },
  });
}

/** An `idempotency-key`: 1-255 printable ASCII characters (the OpenAPI document shows this very pattern). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/** `idempotency-key` must be present (400 IDEMPOTENCY_KEY_MISSING) and 1-255 printable ASCII characters. */
export function idempotencyKeyHeader(): ChainStep {
  return stepAnswering(['IDEMPOTENCY_KEY_MISSING', 'VALIDATION_ERROR'], {
    before: (request: ChainRequest) => {
      const key = request.event.headers['idempotency-key'];
      if (key === undefined || key === '') throw errors.idempotencyKeyMissing();
      if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
        throw fieldValidationError('idempotency-key', 'Must be 1-255 printable ASCII characters', 'Invalid idempotency-key header');
      }
    },
  });
}

/**
 * How far a lease runs past the function's own deadline (clock differences between hosts): the function cannot
 * outlive its deadline, so a live request never loses its key to a retry, and a retry after a crash waits no
 * longer than the request could have run.
 */
const LEASE_MARGIN_MS = 1_000;

/**
 * What a 409 IDEMPOTENCY_KEY_IN_USE tells the caller to wait: a payment request takes about a second, so the
 * first request has most likely finished by then. The lease bounds it from above (a request that can no longer
 * run is certainly over); it is the safety bound, not the estimate: at the start of a 29 s function it is ~30 s,
 * which would make a partner wait 30 s for a 1 s request.
 */
const IN_FLIGHT_RETRY_AFTER_MS = 1_000;

/**
 * Replays the first response for a repeated (key, body), refuses a changed body (422) or a concurrent repeat
 * (409, `Retry-After` about when the first request has finished: {@link IN_FLIGHT_RETRY_AFTER_MS}, or the time left
 * on its lease when that is shorter). Stores the
 * outcome the operation reached (2xx, and its business answers such as 409 CLIENT_EXISTS or 404
 * CLIENT_NOT_FOUND); releases the key instead for what a retry may see differently: a validation failure (400
 * VALIDATION_ERROR; a body too large never gets this far: its size is checked before any access step), an auth or permission refusal
 * (401/403, e.g. a partner since reactivated), and a 5xx. A failure to store or release changes no answer
 * ({@link settleKey}).
 */
export function idempotency(ports: Pick<HttpPorts, 'idempotency' | 'isDependencyUnavailable'>): ChainStep {
  const records = ports.idempotency;
  return stepAnswering(['IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_KEY_IN_USE'], {
    before: async (request: ChainRequest) => {
      const { event, context } = request;
      const idempotencyKey = event.headers['idempotency-key'] ?? '';
      const fingerprint = createHash('sha256').update(context.svc.rawBody, 'utf8').digest('hex');
      const lease = { owner: ownerOf(context.svc), endpoint: event.routeKey, idempotencyKey, fingerprint, lockToken: randomUUID() };
      const nowMs = Date.now();
      const lockMs = context.getRemainingTimeInMillis() + LEASE_MARGIN_MS;
      const claim = await records.claim({ ...lease, lockMs, nowMs });
      if (claim.claimed) {
        context.svc.idempotency = { ...lease, nonce: claim.nonce };
        return undefined;
      }
      const { existing } = claim;
      if (existing.fingerprint !== fingerprint) throw errors.idempotencyKeyReused();
      if (existing.status === 'in_progress') {
        throw errors.idempotencyKeyInUse(Math.min(existing.lockExpiresAt - nowMs, IN_FLIGHT_RETRY_AFTER_MS) / 1000);
      }
      logger.info('Idempotent replay', { status: existing.response.statusCode });
      countMetric('IdempotentReplays');
      return replay(existing.response, context.svc.requestId);
    },
    after: async (request: ChainRequest) => {
      const lease = request.context.svc.idempotency;
      const response = request.response;
      if (lease === undefined || response === undefined || response === null) return;
      const statusCode = response.statusCode ?? 200;
      const body = response.body ?? '';
      // Already completed with this very answer, in the handler's own write.
      const folded = request.context.svc.foldedCompletion;
      if (folded?.committed === true && folded.response.statusCode === statusCode && folded.response.body === body) return;
      await settleKey(records, lease, statusCode >= 500 ? 'release' : { statusCode, body }, request.context);
    },
    onError: async (request: ChainRequest) => {
      const lease = request.context.svc?.idempotency;
      // No key, or one already completed in the handler's own write: that stored answer is the truth a retry gets.
      if (lease === undefined || request.context.svc.foldedCompletion?.committed === true) return;
      const result = errorResult(request.error, ports.isDependencyUnavailable);
      const isValidationFailure = request.error instanceof ServiceError && request.error.code === 'VALIDATION_ERROR';
      const isRefusal = result.status === 401 || result.status === 403;
      const release = result.status >= 500 || isValidationFailure || isRefusal;
      await settleKey(records, lease, release ? 'release' : { statusCode: result.status, body: JSON.stringify(result.body) }, request.context);
    },
  });
}

/** The time kept, after settling a key, to send the answer before the function's own timeout. */
const SETTLE_ANSWER_MARGIN_MS = 300;

/**
 * Completes the key with the outcome the request reached, or releases it; never throws (nor outlasts the
 * function's time: a write still pending then is abandoned, as if it had failed). Recording an outcome
 * must not change the outcome (the table may be gone by now: DynamoDB killed mid-request):
 *
 * - The operation succeeded (or reached a business answer) but the response could not be stored: the caller
 *   gets that answer, not a 5xx. The work is done (a transaction exists); an error would tell the caller it
 *   failed, and a caller who then retries under a new key would make a second one. The record stays
 *   `in_progress` until its lease runs out (a retry meanwhile: 409 IDEMPOTENCY_KEY_IN_USE); after that a retry
 *   with the same key runs the handler again, which finds its own earlier writes instead of repeating them
 *   (attaching the same intent again answers the same result; a client create answers 409 CLIENT_EXISTS),
 *   not marked as a replay. Checkout and initialize never get here with their work done: they store their
 *   answer in the transaction's own write (`HandlerIdempotency.answer`).
 * - The operation failed and the key cannot be released: the caller gets the mapped error of the failure
 *   itself (503 SERVICE_UNAVAILABLE with `Retry-After` for an unreachable table), never a bare 500; the key
 *   frees itself when its lease runs out.
 */
async function settleKey(
  records: IdempotencyRecords,
  lease: IdempotencyLease,
  outcome: StoredResponse | 'release',
  context: Pick<Context, 'getRemainingTimeInMillis'>,
): Promise<void> {
  // Bounded by the function's time left (less a margin to answer): a table that hangs instead of refusing must
  // not hold the answer past the function's timeout, where the caller would get API Gateway's bare 5xx instead.
  const options = { abortSignal: AbortSignal.timeout(Math.max(0, context.getRemainingTimeInMillis() - SETTLE_ANSWER_MARGIN_MS)) };
  try {
    if (outcome === 'release') await records.release(lease, options);
    else await records.complete(lease, outcome, options);
  } catch (error) {
    const message = outcome === 'release' ? 'Idempotency key not released' : 'Idempotency response not stored; the answer is sent anyway';
    logger.error(`${message}: the key stays in progress until its lease runs out`, { error: error as Error });
    countMetric('IdempotencyRecordFailures');
  }
}

/** The first response again, marked: `idempotentReplay: true` in the body, `Idempotent-Replayed: true` header. */
function replay(stored: StoredResponse, requestId: string) {
  const body = stored.body === '' ? undefined : { ...(JSON.parse(stored.body) as object), idempotentReplay: true };
  return toHttpResponse({ status: stored.statusCode, body, headers: { 'Idempotent-Replayed': 'true' } }, requestId);
}
