/**
 * The route table: every HTTP route of the service, shared by the CDK API stack (one Lambda per route behind
 * the HTTP API) and the local runtime (which turns a request into the same API Gateway event and calls the
 * same handler), so the two cannot drift. Pure data: no CDK, no I/O.
 *
 * `name` is both the Lambda's logical name and its file: `functions/<name>.ts`, exporting `handler`. A function
 * may serve several routes (the branding packet answers its CORS preflight too); it is created once.
 */

import type { TableAccess } from './table-access';

export const API_PREFIX = '/api/v1';

/** Every HTTP function's timeout: just under API Gateway's 30 s integration limit; the local runtime gives the same. */
export const FUNCTION_TIMEOUT_SECONDS = 29;

/** The scheduled settlement function's timeout (not an HTTP route: no API Gateway limit); the local timer gives the same. */
export const SETTLEMENT_RUN_TIMEOUT_SECONDS = 15 * 60;

export type HttpMethod = 'GET' | 'HEAD' | 'POST' | 'PATCH' | 'DELETE' | 'OPTIONS';

/** What a function may touch in AWS; the API stack grants exactly this (least privilege). */
export interface RouteAccess {
  /** The table's actions, by profile (`table-grants.ts`: `describe`, `read`, `items` or `readWrite`); none without it. */
  table?: TableAccess;
  /** `encrypt`: seal new secrets (KMS GenerateDataKey); `decrypt`: open them (KMS Decrypt). */
  kms?: ReadonlyArray<'encrypt' | 'decrypt'>;
  /** Reads the processor keys (Secrets Manager in AWS). */
  processorKeys?: boolean;
  /** Pages a list: reads the key that seals its cursors (Secrets Manager in AWS). */
  cursorKey?: boolean;
  /** Calls the payout rails: reads their credentials (Secrets Manager in AWS). */
  railKeys?: boolean;
  /** Runs settlement: sends what a run cannot finish in time to the settlement continuation queue (SQS in AWS). */
  settlementQueue?: boolean;
}

export interface RouteDefinition {
  name: string;
  method: HttpMethod;
  /** Full path including {@link API_PREFIX}; `{param}` segments are path parameters. */
  path: string;
  access: RouteAccess;
  /**
   * AWS only: the function is also served by a Lambda function URL with auth NONE, besides this route. For the
   * processor webhook, whose caller is configured with one URL and authenticates by the event signature.
   */
  functionUrl?: boolean;
}

const read: RouteAccess = { table: 'read' };
/** Lists: a read that seals and opens paging cursors. */
const list: RouteAccess = { ...read, cursorKey: true };
/** Admin writes: create and update items, never delete one. */
const write: RouteAccess = { table: 'items' };
/** Deletes an item: a key revoked, an endpoint removed. */
const readWrite: RouteAccess = { table: 'readWrite' };
/**
 * Partner mutations: API key lookup, rate-limit counter, HMAC secret (sealed), idempotency record (claimed,
 * completed, released: all updates, never a delete, so the record keeps its nonce).
 */
const partnerMutation: RouteAccess = { table: 'items', kms: ['decrypt'] };
/** ... that also calls the processor. */
const paymentMutation: RouteAccess = { ...partnerMutation, processorKeys: true };

const declaredRoutes: readonly RouteDefinition[] = [
  // Health describes the table and sends the processor's API a HEAD; it reads no item and, in AWS, no secret (locally it
  // checks the processor keys in the environment).
  { name: 'health', method: 'GET', path: `${API_PREFIX}/health`, access: { table: 'describe' } },

  { name: 'admin-partners-create', method: 'POST', path: `${API_PREFIX}/admin/partners`, access: write },
  { name: 'admin-partners-list', method: 'GET', path: `${API_PREFIX}/admin/partners`, access: list },
  { name: 'admin-partners-get', method: 'GET', path: `${API_PREFIX}/admin/partners/{partner_id}`, access: read },
  { name: 'admin-partners-update', method: 'PATCH', path: `${API_PREFIX}/admin/partners/{partner_id}`, access: write },
  {
    name: 'admin-partner-api-keys-create',
    method: 'POST',
    path: `${API_PREFIX}/admin/partners/{partner_id}/api-keys`,
    access: { table: 'items', kms: ['encrypt'] },
  },
  { name: 'admin-api-keys-create', method: 'POST', path: `${API_PREFIX}/admin/api-keys`, access: { table: 'items', kms: ['encrypt'] } },
  { name: 'admin-partner-api-keys-list', method: 'GET', path: `${API_PREFIX}/admin/partners/{partner_id}/api-keys`, access: list },
  // The platform-wide keys (gsi1 `APIKEYS`): a list like the partner's keys, without a partner to read.
  { name: 'admin-api-keys-list', method: 'GET', path: `${API_PREFIX}/admin/api-keys`, access: list },
  { name: 'admin-api-keys-delete', method: 'DELETE', path: `${API_PREFIX}/admin/api-keys/{key_id}`, access: readWrite },

  { name: 'clients-create', method: 'POST', path: `${API_PREFIX}/clients`, access: partnerMutation },
  { name: 'clients-list', method: 'GET', path: `${API_PREFIX}/clients`, access: list },

  { name: 'transactions-checkout-intent', method: 'POST', path: `${API_PREFIX}/transactions/checkout-intent`, access: paymentMutation },
  { name: 'transactions-checkout-intent-v2', method: 'POST', path: `${API_PREFIX}/transactions/checkout-intent-v2`, access: paymentMutation },
  { name: 'transactions-initialize', method: 'POST', path: `${API_PREFIX}/transactions/initialize`, access: partnerMutation },
  { name: 'transactions-attach-intent', method: 'POST', path: `${API_PREFIX}/transactions/attach-intent`, access: paymentMutation },
  { name: 'transactions-list', method: 'GET', path: `${API_PREFIX}/transactions`, access: list },
  { name: 'transactions-get', method: 'GET', path: `${API_PREFIX}/transactions/{svc_tx_id}`, access: read },

  // The processor's events: verified with the webhook secret (processor keys), then one transactional write.
  {
    name: 'processor-webhook',
    method: 'POST',
    path: `${API_PREFIX}/webhooks/processor`,
    access: { table: 'items', processorKeys: true },
    functionUrl: true,
  },

  // Partner webhooks (decisions.md §2). Creating an endpoint seals its secret (KMS encrypt); nothing here opens one:
  // only the delivery consumer (not an HTTP route) decrypts, to sign.
  {
    name: 'admin-webhook-endpoints-create',
    method: 'POST',
    path: `${API_PREFIX}/admin/partners/{partner_id}/webhook-endpoints`,
    access: { table: 'items', kms: ['encrypt'] },
  },
  { name: 'admin-webhook-endpoints-list', method: 'GET', path: `${API_PREFIX}/admin/partners/{partner_id}/webhook-endpoints`, access: read },
  {
    name: 'admin-webhook-endpoints-delete',
    method: 'DELETE',
    path: `${API_PREFIX}/admin/partners/{partner_id}/webhook-endpoints/{id}`,
    access: readWrite,
  },
  { name: 'admin-webhook-deliveries-list', method: 'GET', path: `${API_PREFIX}/admin/partners/{partner_id}/webhook-deliveries`, access: list },
  { name: 'admin-webhook-deliveries-resend', method: 'POST', path: `${API_PREFIX}/admin/webhook-deliveries/{id}/resend`, access: write },
  { name: 'admin-audit-events-list', method: 'GET', path: `${API_PREFIX}/admin/audit-events`, access: list },

  // Settlement (interface-spec.md; decisions.md §7): API key only. A run queries the settlement index and writes
  // each batch with its flips in one transaction, and sends what it cannot finish in time to the continuation
  // queue; a pay also calls the rails. Neither scans or deletes.
  { name: 'settlements-run', method: 'POST', path: `${API_PREFIX}/settlements/run`, access: { table: 'settle', settlementQueue: true } },
  { name: 'settlements-list', method: 'GET', path: `${API_PREFIX}/settlements`, access: list },
  { name: 'settlements-pay', method: 'POST', path: `${API_PREFIX}/settlements/pay`, access: { table: 'items', railKeys: true } },
  { name: 'settlements-report', method: 'GET', path: `${API_PREFIX}/settlements/{id}/report.csv`, access: read },
  // The ledger's balances (decisions.md §5a): a Query of the settlement index, summed per merchant and currency.
  { name: 'balances-list', method: 'GET', path: `${API_PREFIX}/balances`, access: list },

  // The admin console's view of every partner: the partner routes' use cases for an admin caller. An admin's run
  // and pay also write their audit events (a put; a pay's in the claim's transaction).
  { name: 'admin-transactions-list', method: 'GET', path: `${API_PREFIX}/admin/transactions`, access: list },
  { name: 'admin-transactions-get', method: 'GET', path: `${API_PREFIX}/admin/transactions/{svc_tx_id}`, access: read },
  { name: 'admin-settlements-list', method: 'GET', path: `${API_PREFIX}/admin/settlements`, access: list },
  {
    name: 'admin-settlements-run',
    method: 'POST',
    path: `${API_PREFIX}/admin/settlements/run`,
    access: { table: 'settle', settlementQueue: true },
  },
  {
    name: 'admin-settlements-pay',
    method: 'POST',
    path: `${API_PREFIX}/admin/settlements/{settlement_batch_id}/pay`,
    access: { table: 'items', railKeys: true },
  },
  { name: 'admin-settlements-report', method: 'GET', path: `${API_PREFIX}/admin/settlements/{settlement_batch_id}/report.csv`, access: read },
  { name: 'admin-balances-list', method: 'GET', path: `${API_PREFIX}/admin/partners/{partner_id}/balances`, access: list },

  { name: 'branding-packet', method: 'GET', path: `${API_PREFIX}/branding/packet`, access: { table: 'read', processorKeys: true } },

  // The API's own documentation: the OpenAPI document, and the page that renders it with its script.
  { name: 'openapi-document', method: 'GET', path: `${API_PREFIX}/openapi.json`, access: {} },
  { name: 'api-docs', method: 'GET', path: `${API_PREFIX}/docs`, access: {} },
  { name: 'api-docs-script', method: 'GET', path: `${API_PREFIX}/docs/scalar.js`, access: {} },
  { name: 'branding-packet', method: 'OPTIONS', path: `${API_PREFIX}/branding/packet`, access: { table: 'read', processorKeys: true } },
];

/**
 * Every route, plus a HEAD route beside each GET route, to the same function: HTTP says a server that
 * answers GET answers HEAD (the same status and headers, no body), and API Gateway's HTTP API does not map
 * HEAD to a GET route by itself (it would fall through to `$default`, a 405). The function runs as for GET;
 * HTTP forbids a body in a HEAD response, so the server in front drops it: API Gateway in AWS, Node's HTTP
 * server locally (which keeps GET's `content-length`).
 */
export const routes: readonly RouteDefinition[] = [
  ...declaredRoutes,
  ...declaredRoutes.filter((route) => route.method === 'GET').map((route): RouteDefinition => ({ ...route, method: 'HEAD' })),
];

/**
 * The function behind API Gateway's `$default` route: anything no route matches. It answers 405 when the
 * path exists under another method, else 404, in the spec's error body.
 */
export const fallbackRoute: Omit<RouteDefinition, 'method' | 'path'> = { name: 'not-found', access: {} };

export const routeKey = (route: Pick<RouteDefinition, 'method' | 'path'>) => `${route.method} ${route.path}`;

export interface RouteMatch {
  route: RouteDefinition;
  pathParameters: Record<string, string>;
}

const compiled = routes.map((route) => {
  const names: string[] = [];
  const pattern = route.path
    .split('/')
    .map((segment) => {
      const param = /^\{([A-Za-z0-9_]+)\}$/.exec(segment);
      if (param?.[1] === undefined) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(param[1]);
      return '([^/]+)';
    })
    .join('/');
  return { route, names, regex: new RegExp(`^${pattern}$`) };
});

/** Like API Gateway: percent-decoded, but a malformed escape (`%ZZ`) is passed through as it is, not an error. */
export function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Finds the routes whose path matches; API Gateway's rule: a literal segment beats a `{param}`. */
export function matchPath(path: string): RouteMatch[] {
  const matches: RouteMatch[] = [];
  for (const { route, names, regex } of compiled) {
    const found = regex.exec(path);
    if (found === null) continue;
    const pathParameters = Object.fromEntries(names.map((name, i) => [name, decodePathSegment(found[i + 1] ?? '')]));
    matches.push({ route, pathParameters });
  }
  return matches.sort((a, b) => Object.keys(a.pathParameters).length - Object.keys(b.pathParameters).length);
}

/** The route for a method and path, or the methods the path allows (for 405), or nothing (404). */
export function resolveRoute(method: string, path: string): RouteMatch | { allowed: HttpMethod[] } {
  const matches = matchPath(path);
  const exact = matches.find((match) => match.route.method === method.toUpperCase());
  if (exact !== undefined) return exact;
  return { allowed: [...new Set(matches.map((match) => match.route.method))] };
}
