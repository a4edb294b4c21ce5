/**
 * HTTP for the fuzz suites: exact bytes out, every answer kept raw (a body that is not JSON is a
 * finding, not a crash of the test), and the answer rules every route must keep whatever it is sent
 * (decisions.md §3, docs/conventions.md): never a 5xx; every non-2xx is `{ error, code }` with the status the spec
 * gives that code, plus `details: { fieldErrors, formErrors }` on VALIDATION_ERROR and nowhere else.
 */
import { createHash, createHmac, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { PartnerCredentials } from '../api';
import { contractViolation } from '../contract';
import { seedFrom } from '../seeds';

export interface Answer {
  status: number;
  contentType: string | null;
  text: string;
  /** The body parsed, or `undefined` (empty, or not JSON: see `parsed`). */
  json: any;
  parsed: boolean;
  /** How the answer breaks the route's documented contract (`contract.ts`), if it does. */
  contractViolation: string | undefined;
}

export async function send(url: string, init: { method: string; headers: Record<string, string>; body?: Buffer | undefined }): Promise<Answer> {
  const response = await fetch(url, { method: init.method, headers: init.headers, ...(init.body === undefined ? {} : { body: init.body }) });
  const text = await response.text();
  let json: unknown;
  let parsed = false;
  if (text !== '') {
    try {
      json = JSON.parse(text);
      parsed = true;
    } catch {
      parsed = false;
    }
  }
  const contentType = response.headers.get('content-type');
  const { pathname, search } = new URL(url);
  const violation = await contractViolation({ method: init.method, url: pathname + search, status: response.status, headers: response.headers, text });
  return { status: response.status, contentType, text, json, parsed, contractViolation: violation };
}

/** HMAC-SHA256 of the exact bytes, lowercase hex (docs/authentication.md). */
export const hmacHex = (secret: string, bytes: Buffer) => createHmac('sha256', secret).update(bytes).digest('hex');

/** A partner mutation with a valid key, a correct signature of exactly `bytes` and a fresh idempotency key. */
export const signedPost = (
  baseUrl: string,
  credentials: Pick<PartnerCredentials, 'apiKey' | 'hmacSecret'>,
  path: string,
  bytes: Buffer,
  idempotencyKey: string = randomUUID(),
) =>
  send(`${baseUrl}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': credentials.apiKey,
      'x-svc-hmac': hmacHex(credentials.hmacSecret, bytes),
      'idempotency-key': idempotencyKey,
    },
    body: bytes,
  });

/** An admin call with a valid bearer token and exactly `bytes` as its body. */
export const adminSend = (baseUrl: string, token: string, method: string, path: string, bytes?: Buffer) =>
  send(`${baseUrl}${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: bytes });

/**
 * Every error code the spec, decisions.md and docs/ name, with its status. An error answer must carry one of
 * these, with this status.
 */
export const ERROR_STATUS: Readonly<Record<string, number>> = {
  VALIDATION_ERROR: 400,
  IDEMPOTENCY_KEY_MISSING: 400,
  CLIENT_FEE_BELOW_SVC_FEE: 400,
  PROCESSOR_SIGNATURE_MISSING: 400,
  PROCESSOR_SIGNATURE_INVALID: 400,
  INVALID_WEBHOOK_JSON: 400,
  MISSING_INTENT_ID: 400,
  API_KEY_MISSING: 401,
  API_KEY_INVALID: 401,
  HMAC_MISSING: 401,
  HMAC_INVALID: 401,
  ADMIN_TOKEN_INVALID: 401,
  API_KEY_SCOPE_FORBIDDEN: 403,
  ADMIN_FORBIDDEN: 403,
  PARTNER_NOT_ACTIVE: 403,
  PARTNER_SUSPENDED: 403,
  KYC_NOT_APPROVED: 403,
  CLIENT_NOT_ACTIVE: 403,
  NOT_FOUND: 404,
  PARTNER_NOT_FOUND: 404,
  CLIENT_NOT_FOUND: 404,
  TX_NOT_FOUND: 404,
  BATCH_NOT_FOUND: 404,
  API_KEY_NOT_FOUND: 404,
  WEBHOOK_ENDPOINT_NOT_FOUND: 404,
  WEBHOOK_DELIVERY_NOT_FOUND: 404,
  PAYMENT_INTENT_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  TX_NOT_INITIALIZED: 409,
  CLIENT_EXISTS: 409,
  BATCH_ALREADY_PAID: 409,
  BATCH_PAYOUT_IN_PROGRESS: 409,
  IDEMPOTENCY_KEY_IN_USE: 409,
  WEBHOOK_ENDPOINT_LIMIT_REACHED: 409,
  WEBHOOK_ENDPOINT_DELETED: 409,
  PAYLOAD_TOO_LARGE: 413,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMITED: 429,
};

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isStringArray = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string');

/** Why `answer` breaks the answer rules above, or `undefined`. */
export function answerProblem(answer: Answer): string | undefined {
  if (answer.contractViolation !== undefined) return `against the documented contract: ${answer.contractViolation}`;
  if (answer.status >= 500) return `a server error: ${answer.status} ${answer.text.slice(0, 300)}`;
  if (answer.status < 400) return answer.text === '' || answer.parsed ? undefined : `a ${answer.status} whose body is not JSON: ${answer.text.slice(0, 200)}`;
  if (!answer.parsed || !isPlainObject(answer.json)) return `a ${answer.status} whose body is not a JSON object: ${answer.text.slice(0, 200)}`;
  if (!(answer.contentType ?? '').startsWith('application/json')) return `a ${answer.status} with content-type ${answer.contentType}`;
  const body = answer.json as Record<string, unknown>;
  const { code } = body;
  const keys = Object.keys(body).sort().join(',');
  const expectedKeys = code === 'VALIDATION_ERROR' ? 'code,details,error' : 'code,error';
  if (keys !== expectedKeys) return `an error body with keys ${keys} (the spec's: ${expectedKeys}): ${answer.text.slice(0, 200)}`;
  if (typeof body.error !== 'string' || body.error === '') return `an error body without a message: ${answer.text.slice(0, 200)}`;
  if (typeof code !== 'string' || !(code in ERROR_STATUS)) return `an error code no spec names: ${JSON.stringify(code)}`;
  if (ERROR_STATUS[code] !== answer.status) return `${code} answered with ${answer.status} (the spec's status is ${ERROR_STATUS[code]})`;
  if (code === 'VALIDATION_ERROR') {
    const details = body.details;
    if (!isPlainObject(details) || Object.keys(details).sort().join(',') !== 'fieldErrors,formErrors') return `VALIDATION_ERROR details not { fieldErrors, formErrors }: ${JSON.stringify(details)}`;
    if (!isStringArray(details.formErrors)) return 'VALIDATION_ERROR formErrors is not a list of strings';
    if (!isPlainObject(details.fieldErrors) || !Object.values(details.fieldErrors).every(isStringArray)) return 'VALIDATION_ERROR fieldErrors is not field -> list of strings';
    if (details.formErrors.length === 0 && Object.keys(details.fieldErrors).length === 0) return 'a VALIDATION_ERROR that names no error';
  }
  return undefined;
}

/** Fails the property (fast-check reports the seed, the path and the shrunk counterexample). */
export function assertThat(condition: boolean, message: () => string): asserts condition {
  if (!condition) throw new Error(message());
}

/**
 * fast-check parameters of the fuzz suites: a fixed seed, FUZZ_SEED (default 11062026) mixed with the property's
 * name so that each property draws its own sequence (fast-check prints the seed it used on failure: replay it
 * with `seed` and `path`), and `numRuns` scaled by FUZZ_RUNS_FACTOR (default 1: the whole fuzz suite in about a
 * minute and a half on a busy 2-core machine; raise it for a deeper run).
 */
export function fuzzParameters<T>(property: string, numRuns: number, extra: fc.Parameters<T> = {}): fc.Parameters<T> {
  const base = seedFrom('FUZZ_SEED', 11_062_026);
  const salt = createHash('sha256').update(property).digest().readUInt32BE(0);
  const factor = Number(process.env.FUZZ_RUNS_FACTOR ?? 1);
  return { seed: (base ^ salt) | 0, numRuns: Math.max(1, Math.round(numRuns * factor)), ...extra };
}
