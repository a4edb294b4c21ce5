/**
 * The sandbox checkout's own partner, made through the admin and partner HTTP APIs as an integrator would make it:
 * the partner "Sandbox checkout" (active, KYC approved), its API key, a webhook endpoint at
 * `/sandbox/webhooks/payments` for every event, and the merchant `sandbox-merchant`. Its credentials are kept in
 * `stateDir` (beside DynamoDB's data, readable by the owner only), so a restart finds the same partner; when the
 * data behind them is gone (`--in-memory`, a wiped `.data/`), a new partner is made.
 *
 * Each call is retried as a partner's client retries it (service-call.ts), and what is made is kept after each step,
 * so a step that still fails (a service answering 503 for longer) is taken up again by the next request with the
 * same partner instead of leaving that partner unused and making another.
 */
import * as z from 'zod';
import { signBody } from '../../../../lib/auth/credentials';
import { PARTNER_EVENTS } from '../../../../lib/domain/webhooks';
import { readStateFile, StateFile } from '../state-file';
import { callService, describeAnswer, type ServiceRequest } from './service-call';

export const SANDBOX_MERCHANT = 'sandbox-merchant';
const PARTNER_NAME = 'Sandbox checkout';
const STATE_VERSION = 1;

export const Credentials = z.object({
  partner_id: z.string().min(1),
  api_key: z.string().min(1),
  hmac_secret: z.string().min(1),
  webhook_secret: z.string().min(1),
});
export type Credentials = z.infer<typeof Credentials>;

/**
 * The partner as far as it was made: `incomplete` until its merchant exists. A file without `incomplete` holds a
 * finished partner, as every file did before the steps were kept one by one.
 */
const Kept = z
  .object({
    partner_id: z.string().min(1),
    api_key: z.string().min(1).optional(),
    hmac_secret: z.string().min(1).optional(),
    webhook_endpoint_id: z.string().min(1).optional(),
    webhook_secret: z.string().min(1).optional(),
    incomplete: z.literal(true).optional(),
  })
  .refine((kept) => (kept.api_key === undefined) === (kept.hmac_secret === undefined), 'api_key and hmac_secret go together')
  .refine((kept) => kept.incomplete === true || Credentials.safeParse(kept).success, 'a finished partner has its api_key, hmac_secret and webhook_secret');
type Kept = z.infer<typeof Kept>;

/** Where the partner is kept between requests and restarts. */
export interface PartnerKeeper {
  read(): Promise<Kept | undefined>;
  save(kept: Kept): Promise<void>;
}

/** Kept in `stateDir`'s state file; `undefined`: in memory (`--in-memory`), as long as the data behind it. */
export function partnerKeeper(stateDir: string | undefined): PartnerKeeper {
  let current: Kept | undefined;
  if (stateDir === undefined) {
    return {
      read: async () => current,
      save: async (kept) => void (current = kept),
    };
  }
  const file = new StateFile(stateDir, STATE_VERSION, () => current ?? {});
  return {
    read: async () => {
      const content = await readStateFile(stateDir, Kept, cannotRead);
      return content === undefined ? undefined : Kept.parse(content);
    },
    save: async (kept) => {
      current = kept;
      await file.save();
    },
  };
}

export interface SandboxPartnerOptions {
  /** The service's origin as this process reaches it (`http://127.0.0.1:<PORT>`); the webhook endpoint points there too. */
  apiOrigin: string;
  /** Where the sandbox backend is mounted on the service's port (`/sandbox`): its webhook endpoint is under it. */
  basePath: string;
  /** A fresh admin token, to make the partner. */
  adminToken: () => Promise<string>;
  /** Where the partner is kept, step by step ({@link partnerKeeper}). */
  keeper: PartnerKeeper;
}

const serviceUrlOf = (apiOrigin: string) => `${apiOrigin}/api/v1`;

/** The kept partner if the service still knows it and its key; an unfinished one finished; else a new one (kept from now on). */
export async function sandboxPartner(options: SandboxPartnerOptions): Promise<Credentials> {
  const kept = await options.keeper.read();
  if (kept !== undefined && kept.incomplete !== true) {
    const credentials = Credentials.parse(kept);
    if (await keyStillWorks(credentials, options.apiOrigin)) return credentials;
  }
  const admin = adminCalls(options.apiOrigin, await options.adminToken());
  const unfinished = kept?.incomplete === true && (await stillExists(kept, admin, options.apiOrigin)) ? kept : undefined;
  return finishPartner(options, admin, unfinished);
}

const cannotRead = (path: string, reason: string) => new Error(`The sandbox checkout's state file ${path} cannot be read (${reason}); delete it to make a new sandbox partner`);

/**
 * Whether the kept key still works: a read with it answers 200 (true), or 401 API_KEY_INVALID (false: revoked, or
 * the data behind it is gone; a new partner is made). Any other answer throws, keeping the credentials: a
 * suspended partner (403) stays suspended, with the page answering 503, rather than being replaced by a new active
 * one; a failing service (5xx, past its retries) is tried again on the next request. The merchant needs no check:
 * a partner is kept as finished only once every step of {@link finishPartner}, the merchant last, has succeeded.
 */
export async function keyStillWorks(credentials: Pick<Credentials, 'partner_id' | 'api_key'>, apiOrigin: string): Promise<boolean> {
  const answer = await callService({ method: 'GET', url: `${serviceUrlOf(apiOrigin)}/clients?limit=1`, headers: { 'x-api-key': credentials.api_key } });
  if (answer.status === 200) return true;
  if (answer.status === 401) return false;
  throw new Error(`the sandbox partner ${credentials.partner_id} cannot pay now: GET /clients answered ${answer.status} ${answer.text.slice(0, 200)}`);
}

type AdminCalls = ReturnType<typeof adminCalls>;

/** Admin calls under one token: `call` answers as the service did; `made` throws unless it answered 2xx, and parses the body. */
function adminCalls(apiOrigin: string, token: string) {
  const requestOf = (method: ServiceRequest['method'], path: string, body?: unknown): ServiceRequest => ({
    method,
    url: `${serviceUrlOf(apiOrigin)}${path}`,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const call = async (method: ServiceRequest['method'], path: string, body?: unknown) => {
    const request = requestOf(method, path, body);
    const answer = await callService(request);
    return { ...answer, describe: () => describeAnswer(request, answer) };
  };
  const made = async (method: ServiceRequest['method'], path: string, body?: unknown): Promise<Record<string, unknown>> => {
    const answer = await call(method, path, body);
    if (answer.status < 200 || answer.status > 299) throw new Error(answer.describe());
    return JSON.parse(answer.text) as Record<string, unknown>;
  };
  return { call, made };
}

/** Whether the service still knows an unfinished partner (the data behind it may be gone, as a finished one's may). */
async function stillExists(kept: Kept, admin: AdminCalls, apiOrigin: string): Promise<boolean> {
  if (kept.api_key !== undefined) return keyStillWorks({ partner_id: kept.partner_id, api_key: kept.api_key }, apiOrigin);
  const answer = await admin.call('GET', `/admin/partners/${kept.partner_id}`);
  if (answer.status === 200) return true;
  if (answer.status === 404) return false;
  throw new Error(answer.describe());
}

/**
 * Partner, key, webhook endpoint, merchant, in that order, each kept as soon as it exists; `from`: an unfinished
 * partner, whose missing steps are taken. A step that fails throws; the next request takes it up again.
 *
 * The admin calls carry no idempotency key (the admin API takes none): a retry after an answer lost once the
 * service had acted makes a second partner or key, unused, which does no harm; a second webhook endpoint would
 * have the service sign deliveries with a secret nobody keeps, so the partner's endpoints other than the kept one
 * are removed before the merchant is made. The merchant's call is idempotent: retried, and taken up again, under
 * the key a partner's client would use for it.
 */
async function finishPartner(options: SandboxPartnerOptions, admin: AdminCalls, from: Kept | undefined): Promise<Credentials> {
  let kept: Kept;
  if (from === undefined) {
    const partner = await admin.made('POST', '/admin/partners', { name: PARTNER_NAME, service_fee_percentage: 1.5, kyc_status: 'approved' });
    kept = { partner_id: String(partner.partner_id), incomplete: true };
    await options.keeper.save(kept);
  } else {
    kept = from;
    console.log(`[sandbox-checkout] finishing the sandbox partner ${kept.partner_id}, left unfinished`);
  }
  const partnerPath = `/admin/partners/${kept.partner_id}`;
  if (kept.api_key === undefined) {
    const key = await admin.made('POST', `${partnerPath}/api-keys`, { scope: 'partner' });
    kept = { ...kept, api_key: String(key.api_key), hmac_secret: String(key.hmac_secret) };
    await options.keeper.save(kept);
  }
  if (kept.webhook_secret === undefined) {
    const endpoint = await admin.made('POST', `${partnerPath}/webhook-endpoints`, {
      name: 'Sandbox checkout backend',
      url: `${options.apiOrigin}${options.basePath}/webhooks/payments`,
      events: PARTNER_EVENTS,
    });
    kept = { ...kept, webhook_endpoint_id: String(endpoint.id), webhook_secret: String(endpoint.secret) };
    await options.keeper.save(kept);
  }
  await removeOtherEndpoints(admin, partnerPath, kept.webhook_endpoint_id);
  const { incomplete: _, ...finished } = kept;
  const credentials = Credentials.parse(finished);
  await createMerchant(options.apiOrigin, credentials);
  await options.keeper.save(finished);
  console.log(`[sandbox-checkout] made the sandbox partner ${credentials.partner_id} (merchant ${SANDBOX_MERCHANT}) for ${options.basePath}/checkout`);
  return credentials;
}

/** Every webhook endpoint of the partner but `keptId` (`undefined` in a file kept before endpoint ids were: none removed). */
async function removeOtherEndpoints(admin: AdminCalls, partnerPath: string, keptId: string | undefined): Promise<void> {
  if (keptId === undefined) return;
  const { items } = (await admin.made('GET', `${partnerPath}/webhook-endpoints`)) as { items: { id: string }[] };
  for (const { id } of items.filter((endpoint) => endpoint.id !== keptId)) {
    const answer = await admin.call('DELETE', `${partnerPath}/webhook-endpoints/${id}`);
    if (answer.status !== 204 && answer.status !== 404) throw new Error(answer.describe());
  }
}

/**
 * The merchant through the partner API, signed as a partner signs (docs/authentication.md), under the key a
 * partner's client would use for it. 409 CLIENT_EXISTS: an earlier try made it, its answer lost, past the key's
 * replay window.
 */
async function createMerchant(apiOrigin: string, credentials: Credentials): Promise<void> {
  const body = JSON.stringify({ client_id: SANDBOX_MERCHANT, legal_name: 'Sandbox Shop Ltd', partner_fee_percentage: 2, partner_fee_flat_usd: 0.3 });
  const request: ServiceRequest = {
    method: 'POST',
    url: `${serviceUrlOf(apiOrigin)}/clients`,
    headers: { 'content-type': 'application/json', 'x-api-key': credentials.api_key, 'x-svc-hmac': signBody(credentials.hmac_secret, body), 'idempotency-key': `client-${SANDBOX_MERCHANT}` },
    body,
  };
  const answer = await callService(request);
  if (answer.status !== 201 && !(answer.status === 409 && answer.code === 'CLIENT_EXISTS')) throw new Error(describeAnswer(request, answer));
}
