/**
 * Drives the service over HTTP, as a partner and an admin would: the local HTTP API (the same route table and
 * handlers as AWS) on a free port, against the integration run's DynamoDB Local.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from '@jest/globals';
import { startHttpApi, type HttpApi } from '../../infra/local/runtime/http-api';
import { issueLocalAdminToken } from '../../lib/auth/admin-token';
import { config } from '../../lib/config';
import { contractViolation } from './contract';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface PartnerCredentials {
  partnerId: string;
  keyId: string;
  apiKey: string;
  hmacSecret: string;
}

/** JSON bodies parsed; any other (a CSV report) kept as text. */
const parseBody = (text: string, contentType: string | null) => (contentType?.startsWith('application/json') === true ? JSON.parse(text) : text);

export const sign = (secret: string, rawBody: string) => createHmac('sha256', secret).update(rawBody).digest('hex');

export class TestApi {
  private constructor(
    private readonly server: HttpApi,
    readonly adminToken: string,
  ) {}

  /** On a free port, or on `port` (for a sandbox processor that must know where to send its events first). */
  static async start(options: { port?: number } = {}): Promise<TestApi> {
    return new TestApi(await startHttpApi({ port: options.port ?? 0, host: '127.0.0.1' }), await issueLocalAdminToken(config));
  }

  close = () => this.server.close();

  get baseUrl() {
    return `${this.server.url}/api/v1`;
  }

  /**
   * Sends a request and reads its answer, which must keep the documented contract (`contract.ts`: a documented
   * status, a body its schema accepts, a documented error code): a test sending anything learns so at once.
   */
  async request(method: string, path: string, options: { headers?: Record<string, string>; body?: string } = {}): Promise<ApiResponse> {
    const url = `${this.baseUrl}${path}`;
    const response = await fetch(url, { method, headers: options.headers, body: options.body });
    const text = await response.text();
    const violation = await contractViolation({ method, url: new URL(url).pathname + new URL(url).search, status: response.status, headers: response.headers, text });
    if (violation !== undefined) throw new Error(`${method} ${path} answered ${response.status} against the documented contract: ${violation}\n${text.slice(0, 500)}`);
    return { status: response.status, headers: response.headers, body: text === '' ? undefined : parseBody(text, response.headers.get('content-type')) };
  }

  admin(method: string, path: string, body?: unknown, token = this.adminToken): Promise<ApiResponse> {
    return this.request(method, path, {
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }

  /** A partner mutation, signed as the spec says: HMAC-SHA256 of the exact body, lowercase hex. */
  signed(
    credentials: Pick<PartnerCredentials, 'apiKey' | 'hmacSecret'>,
    path: string,
    body: unknown,
    options: { idempotencyKey?: string; rawBody?: string; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse> {
    const rawBody = options.rawBody ?? JSON.stringify(body);
    return this.request('POST', path, {
      headers: {
        'content-type': 'application/json',
        'x-api-key': credentials.apiKey,
        'x-svc-hmac': sign(credentials.hmacSecret, rawBody),
        'idempotency-key': options.idempotencyKey ?? randomUUID(),
        ...options.headers,
      },
      body: rawBody,
    });
  }

  read(credentials: Pick<PartnerCredentials, 'apiKey'>, path: string): Promise<ApiResponse> {
    return this.request('GET', path, { headers: { 'x-api-key': credentials.apiKey } });
  }

  /** A new partner (its own data, so tests never depend on each other) with one partner-scoped key. */
  async createPartner(overrides: Record<string, unknown> = {}): Promise<PartnerCredentials> {
    const partner = await this.admin('POST', '/admin/partners', {
      name: `Partner ${randomUUID().slice(0, 8)}`,
      service_fee_percentage: 1.5,
      kyc_status: 'approved',
      ...overrides,
    });
    if (partner.status !== 201) throw new Error(`partner not created: ${JSON.stringify(partner.body)}`);
    const key = await this.admin('POST', `/admin/partners/${partner.body.partner_id}/api-keys`, { scope: 'partner' });
    if (key.status !== 201) throw new Error(`key not created: ${JSON.stringify(key.body)}`);
    return { partnerId: partner.body.partner_id, keyId: key.body.key_id, apiKey: key.body.api_key, hmacSecret: key.body.hmac_secret };
  }

  /** A merchant of the partner (active unless told otherwise); returns its `client_id`. */
  async createClient(partner: Pick<PartnerCredentials, 'apiKey' | 'hmacSecret'>, overrides: Record<string, unknown> = {}): Promise<string> {
    const response = await this.signed(partner, '/clients', {
      client_id: `merchant-${randomUUID().slice(0, 12)}`,
      legal_name: 'Merchant Ltd',
      ...overrides,
    });
    if (response.status !== 201) throw new Error(`client not created: ${JSON.stringify(response.body)}`);
    return response.body.client_id as string;
  }

  async createPlatformKey(): Promise<Omit<PartnerCredentials, 'partnerId'>> {
    const key = await this.admin('POST', '/admin/api-keys', { scope: 'platform' });
    if (key.status !== 201) throw new Error(`key not created: ${JSON.stringify(key.body)}`);
    return { keyId: key.body.key_id, apiKey: key.body.api_key, hmacSecret: key.body.hmac_secret };
  }
}

export interface PartnerSuite {
  api: TestApi;
  partner: PartnerCredentials;
  /** An active client of `partner`. */
  clientId: string;
}

/**
 * A test file's world: registers `beforeAll`/`afterAll` that start the local API, create a KYC-approved partner
 * with a key (`partner` overrides its fields) and one active client, and stop the API afterwards.
 */
export function usePartnerSuite(options: { partner?: Record<string, unknown> } = {}): PartnerSuite {
  const suite = {} as PartnerSuite;
  beforeAll(async () => {
    suite.api = await TestApi.start();
    suite.partner = await suite.api.createPartner(options.partner);
    suite.clientId = await suite.api.createClient(suite.partner);
  });
  afterAll(() => suite.api.close());
  return suite;
}
