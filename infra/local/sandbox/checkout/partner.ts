/**
 * The sandbox checkout's own partner, made through the admin and partner HTTP APIs as an integrator would make it:
 * the partner "Sandbox checkout" (active, KYC approved), its API key, a webhook endpoint at
 * `/sandbox/webhooks/payments` for every event, and the merchant `sandbox-merchant`. Its credentials are kept in
 * `stateDir` (beside DynamoDB's data, readable by the owner only), so a restart finds the same partner; when the
 * data behind them is gone (`--in-memory`, a wiped `.data/`), a new partner is made.
 */
import * as z from 'zod';
import { signBody } from '../../../../lib/auth/credentials';
import { PARTNER_EVENTS } from '../../../../lib/domain/webhooks';
import { readStateFile, StateFile } from '../state-file';

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

export interface SandboxPartnerOptions {
  /** The service's origin as this process reaches it (`http://127.0.0.1:<PORT>`); the webhook endpoint points there too. */
  apiOrigin: string;
  /** Where the sandbox backend is mounted on the service's port (`/sandbox`): its webhook endpoint is under it. */
  basePath: string;
  /** A fresh admin token, to make the partner. */
  adminToken: () => Promise<string>;
  /** Where the partner's credentials are kept; `undefined`: in memory (`--in-memory`). */
  stateDir?: string | undefined;
}

const serviceUrlOf = (apiOrigin: string) => `${apiOrigin}/api/v1`;

/** The kept partner if the service still knows it and its key, else a new one (kept from now on). */
export async function sandboxPartner(options: SandboxPartnerOptions): Promise<Credentials> {
  const kept = options.stateDir === undefined ? undefined : ((await readStateFile(options.stateDir, Credentials, cannotRead)) as Credentials | undefined);
  if (kept !== undefined && (await keyStillWorks(kept, options.apiOrigin))) return kept;
  const made = await makePartner(options);
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
export async function keyStillWorks(credentials: Credentials, apiOrigin: string): Promise<boolean> {
  const response = await fetch(`${serviceUrlOf(apiOrigin)}/clients?limit=1`, { headers: { 'x-api-key': credentials.api_key } });
  const text = await response.text();
  if (response.ok) return true;
  if (response.status === 401) return false;
  throw new Error(`the sandbox partner ${credentials.partner_id} cannot pay now: GET /clients answered ${response.status} ${text.slice(0, 200)}`);
}

/**
 * Partner, key, webhook endpoint, merchant, in that order. A step that fails leaves what came before it unused (a
 * partner with no merchant): the next request starts again with a new partner, since nothing was kept.
 */
async function makePartner(options: SandboxPartnerOptions): Promise<Credentials> {
  const serviceUrl = serviceUrlOf(options.apiOrigin);
  const token = await options.adminToken();
  const post = async (path: string, headers: (rawBody: string) => Record<string, string>, body: unknown): Promise<Record<string, unknown>> => {
    const rawBody = JSON.stringify(body);
    const response = await fetch(`${serviceUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers(rawBody) }, body: rawBody });
    const text = await response.text();
    if (!response.ok) throw new Error(`POST ${path} answered ${response.status}: ${text.slice(0, 300)}`);
    return JSON.parse(text) as Record<string, unknown>;
  };
  const asAdmin = () => ({ authorization: `Bearer ${token}` });
  const partner = await post('/admin/partners', asAdmin, { name: PARTNER_NAME, service_fee_percentage: 1.5, kyc_status: 'approved' });
  const partnerId = String(partner.partner_id);
  const key = await post(`/admin/partners/${partnerId}/api-keys`, asAdmin, { scope: 'partner' });
  const endpoint = await post(`/admin/partners/${partnerId}/webhook-endpoints`, asAdmin, {
    name: 'Sandbox checkout backend',
    url: `${options.apiOrigin}${options.basePath}/webhooks/payments`,
    events: PARTNER_EVENTS,
  });
  const credentials: Credentials = Credentials.parse({ partner_id: partnerId, api_key: key.api_key, hmac_secret: key.hmac_secret, webhook_secret: endpoint.secret });
  // The merchant through the partner API, signed as a partner signs (docs/authentication.md), under the key a
  // partner's client would use for it.
  await post('/clients', (rawBody) => ({ 'x-api-key': credentials.api_key, 'x-svc-hmac': signBody(credentials.hmac_secret, rawBody), 'idempotency-key': `client-${SANDBOX_MERCHANT}` }), {
    client_id: SANDBOX_MERCHANT,
    legal_name: 'Sandbox Shop Ltd',
    partner_fee_percentage: 2,
    partner_fee_flat_usd: 0.3,
  });
  console.log(`[sandbox-checkout] made the sandbox partner ${partnerId} (merchant ${SANDBOX_MERCHANT}) for ${options.basePath}/checkout`);
  return credentials;
}
