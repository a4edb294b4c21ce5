/**
 * The one client of the admin API (`/api/v1/admin/...`, docs/api.md) every section uses: JSON in and out, the
 * admin token as a bearer, and any refusal turned into an `ApiError` carrying the API's own `error` and `code`.
 * A 401 ADMIN_TOKEN_INVALID from any call also tells the app to return to sign-in (`onTokenInvalid`).
 */
import type {
  ApiKeyPage,
  BalanceFilters,
  BalancePage,
  BatchStatus,
  CreatedWebhookEndpoint,
  DeliveryStatus,
  IssuedApiKey,
  NewPartner,
  NewWebhookEndpoint,
  Page,
  Partner,
  PartnerChanges,
  SettlementBatch,
  SettlementRun,
  Transaction,
  TransactionFilters,
  WebhookDelivery,
  WebhookEndpoint,
} from './api-types';

const API_PREFIX = '/api/v1/admin';

/** A refusal of the API, as its error body says it (`code` is stable; `message` is for a person). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export const TOKEN_INVALID = 'ADMIN_TOKEN_INVALID';

const query = (params: Record<string, string | undefined>) => {
  const search = new URLSearchParams(Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''));
  return search.size === 0 ? '' : `?${search}`;
};

export type AdminApi = ReturnType<typeof createAdminApi>;

export function createAdminApi(token: string, onTokenInvalid: (error: ApiError) => void) {
  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`${API_PREFIX}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch {
      throw new ApiError(0, 'NETWORK_ERROR', 'The service could not be reached');
    }
    const text = await response.text();
    const isJson = response.headers.get('content-type')?.startsWith('application/json') === true;
    if (response.ok) return (text === '' ? undefined : isJson ? JSON.parse(text) : text) as T;
    const error = toApiError(response.status, text);
    if (error.status === 401) onTokenInvalid(error);
    throw error;
  }

  return {
    listPartners: (cursor?: string, limit?: number) => call<Page<Partner>>('GET', `/partners${query({ cursor, limit: limit?.toString() })}`),
    createPartner: (partner: NewPartner) => call<Partner>('POST', '/partners', partner),
    updatePartner: (partnerId: string, changes: PartnerChanges) => call<Partner>('PATCH', `/partners/${encodeURIComponent(partnerId)}`, changes),
    listApiKeys: (partnerId: string, cursor?: string) => call<ApiKeyPage>('GET', `/partners/${encodeURIComponent(partnerId)}/api-keys${query({ cursor })}`),
    issueApiKey: (partnerId: string) => call<IssuedApiKey>('POST', `/partners/${encodeURIComponent(partnerId)}/api-keys`, { scope: 'partner' }),
    listPlatformApiKeys: (cursor?: string) => call<ApiKeyPage>('GET', `/api-keys${query({ cursor })}`),
    issuePlatformApiKey: () => call<IssuedApiKey>('POST', '/api-keys', { scope: 'platform' }),
    revokeApiKey: (keyId: string) => call<void>('DELETE', `/api-keys/${encodeURIComponent(keyId)}`),
    listWebhookEndpoints: (partnerId: string) => call<{ items: WebhookEndpoint[] }>('GET', `/partners/${encodeURIComponent(partnerId)}/webhook-endpoints`),
    createWebhookEndpoint: (partnerId: string, endpoint: NewWebhookEndpoint) =>
      call<CreatedWebhookEndpoint>('POST', `/partners/${encodeURIComponent(partnerId)}/webhook-endpoints`, endpoint),
    deleteWebhookEndpoint: (partnerId: string, endpointId: string) =>
      call<void>('DELETE', `/partners/${encodeURIComponent(partnerId)}/webhook-endpoints/${encodeURIComponent(endpointId)}`),
    listDeliveries: (partnerId: string, status: DeliveryStatus | '', cursor?: string) =>
      call<Page<WebhookDelivery>>('GET', `/partners/${encodeURIComponent(partnerId)}/webhook-deliveries${query({ status, cursor })}`),
    resendDelivery: (deliveryId: string) => call<WebhookDelivery>('POST', `/webhook-deliveries/${encodeURIComponent(deliveryId)}/resend`),
    searchTransactions: (filters: TransactionFilters, cursor?: string) => call<Page<Transaction>>('GET', `/transactions${query({ ...filters, cursor })}`),
    listSettlements: (status: BatchStatus | '', cursor?: string) => call<Page<SettlementBatch>>('GET', `/settlements${query({ status, cursor })}`),
    runSettlement: (partnerId: string) => call<SettlementRun>('POST', `/settlements/run${query({ partner_id: partnerId })}`),
    paySettlement: (batchId: string) => call<SettlementBatch>('POST', `/settlements/${encodeURIComponent(batchId)}/pay`),
    settlementReport: (batchId: string) => call<string>('GET', `/settlements/${encodeURIComponent(batchId)}/report.csv`),
    listBalances: (partnerId: string, filters: BalanceFilters, cursor?: string) =>
      call<BalancePage>(
        'GET',
        `/partners/${encodeURIComponent(partnerId)}/balances${query({ owing: String(filters.owing), client_id: filters.client_id, currency: filters.currency, cursor })}`,
      ),
  };
}

/**
 * The error of a refused call. A 401 is always the token's: the service's own body says ADMIN_TOKEN_INVALID, and in
 * AWS API Gateway's authorizer refuses an expired or foreign token before the service runs, with its own body
 * (`{"message":"Unauthorized"}`), which must send the admin back to sign-in all the same.
 */
export function toApiError(status: number, text: string): ApiError {
  try {
    const body = JSON.parse(text) as { error?: unknown; code?: unknown };
    if (typeof body.error === 'string' && typeof body.code === 'string') return new ApiError(status, body.code, body.error);
  } catch {
    // Not the API's error body (a proxy's page): described by its status below.
  }
  if (status === 401) return new ApiError(status, TOKEN_INVALID, 'The admin token was refused (expired, or not for this service): sign in again');
  return new ApiError(status, 'HTTP_ERROR', `The service answered ${status}`);
}
