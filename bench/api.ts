/**
 * The bench as a partner sees the service: an admin creates a partner (rate limit raised out of the way) and its
 * API key; requests are signed as docs/authentication.md says (`x-svc-hmac`: HMAC-SHA256 hex of the exact raw
 * body with the key's secret) and carry a fresh `idempotency-key` unless told otherwise.
 */
import { createHmac, randomUUID } from 'node:crypto';
import type { ServiceProcess } from '../infra/local/runtime/service-process';

/** The headers of one signed partner mutation over `raw`, the exact body sent. */
export function signedHeaders(apiKey: string, hmacSecret: string, raw: string, idempotencyKey: string = randomUUID()): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-api-key': apiKey,
    'x-svc-hmac': createHmac('sha256', hmacSecret).update(raw).digest('hex'),
    'idempotency-key': idempotencyKey,
  };
}

export interface BenchPartner {
  partnerId: string;
  name: string;
  apiKey: string;
  hmacSecret: string;
  /** POST `body` to `path` (below /api/v1) signed with this partner's key. */
  signed(path: string, body: unknown, idempotencyKey?: string): Promise<Response>;
}

/** POST to an admin route; the parsed body, or an error naming the route and answer unless it is 2xx. */
export async function adminPost(service: ServiceProcess, token: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${service.baseUrl}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: JSON.stringify(body) });
  const json = (await response.json()) as Record<string, unknown>;
  if (response.status >= 300) throw new Error(`POST ${path} answered ${response.status}: ${JSON.stringify(json)}`);
  return json;
}

/** A partner (KYC approved, rate limit 1,000,000 a minute, the highest allowed) and a partner-scoped key. */
export async function createBenchPartner(service: ServiceProcess, token: string, name: string): Promise<BenchPartner> {
  const partner = await adminPost(service, token, '/admin/partners', { name, service_fee_percentage: 1, kyc_status: 'approved', rate_limit_per_minute: 1_000_000 });
  const partnerId = String(partner.partner_id);
  const key = await adminPost(service, token, `/admin/partners/${partnerId}/api-keys`, { scope: 'partner' });
  const apiKey = String(key.api_key);
  const hmacSecret = String(key.hmac_secret);
  return {
    partnerId,
    name,
    apiKey,
    hmacSecret,
    signed: (path, body, idempotencyKey) => {
      const raw = JSON.stringify(body);
      return fetch(`${service.baseUrl}${path}`, { method: 'POST', headers: signedHeaders(apiKey, hmacSecret, raw, idempotencyKey), body: raw });
    },
  };
}

/** A client (merchant) of `partner`, created through POST /clients; its `client_id` and `legal_name`. */
export async function createBenchClient(partner: BenchPartner, clientId: string): Promise<{ clientId: string; legalName: string }> {
  const legalName = `${clientId} Ltd`;
  const response = await partner.signed('/clients', { client_id: clientId, legal_name: legalName });
  if (response.status !== 201) throw new Error(`POST /clients answered ${response.status}: ${await response.text()}`);
  return { clientId, legalName };
}

/** A checkout-intent body for `partner`'s client, unique by `reference`. */
export const checkoutBody = (partnerId: string, clientId: string, reference: string, amount = 10) => ({
  partner_id: partnerId,
  client_id: clientId,
  amount,
  currency: 'USD',
  email: 'buyer@example.com',
  partner_reference: reference,
});
