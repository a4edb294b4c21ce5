/**
 * The OpenAPI document: built from the route table and each route's own contract (`infra/openapi/document.ts`),
 * valid OpenAPI 3.1 by a maintained validator, one operation per route and no other, and `docs/openapi.json`
 * (what the service serves) exactly what the code builds today.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { buildOpenApiDocument, errorCatalog, loadContracts, OPENAPI_FILE, routeErrorCodes, serializeOpenApi } from '../../../infra/openapi/document';
import { API_MARKDOWN_FILE, renderApiMarkdown } from '../../../infra/openapi/markdown';
import { routes } from '../../../lib/routes';

let document: Record<string, unknown>;
beforeAll(async () => {
  document = await buildOpenApiDocument();
}, 60_000);

const operations = () =>
  Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(document as never);

    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(document.openapi).toBe('3.1.0');
  });

  it('has one operation for every route of the route table, and none for anything else', () => {
    const documented = operations().sort();
    const declared = routes.map((route) => `${route.method} ${route.path}`).sort();

    expect(documented).toEqual(declared);
  });

  it('documents, for every route, each error code it may answer with, under the status the code has', async () => {
    const contracts = await loadContracts();
    const catalog = errorCatalog();
    for (const route of routes.filter((candidate) => candidate.method !== 'HEAD' && candidate.method !== 'OPTIONS')) {
      const responses = (document.paths as Record<string, Record<string, { responses: Record<string, { content?: Record<string, { examples?: Record<string, unknown> }> }> }>>)[route.path]![
        route.method.toLowerCase()
      ]!.responses;
      for (const code of routeErrorCodes(contracts.get(route.name)!)) {
        const status = String(catalog.get(code)?.status);
        expect({ route: `${route.method} ${route.path}`, code, documented: responses[status]?.content?.['application/json']?.examples?.[code] !== undefined }).toEqual({
          route: `${route.method} ${route.path}`,
          code,
          documented: true,
        });
      }
    }
  }, 60_000);

  it('documents what each kind of route answers: a signed mutation its key, signature, rate and idempotency refusals with their headers; a read none of those; an admin route the token\'s', () => {
    type Responses = Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema: unknown; examples?: Record<string, unknown> }> }>;
    const responsesOf = (method: string, path: string) => (document.paths as Record<string, Record<string, { responses: Responses }>>)[path]![method]!.responses;
    const codesOf = (responses: Responses) => Object.values(responses).flatMap((response) => Object.keys(response.content?.['application/json']?.examples ?? {})).sort();
    const checkout = responsesOf('post', '/api/v1/transactions/checkout-intent');
    const list = responsesOf('get', '/api/v1/transactions');
    const admin = responsesOf('get', '/api/v1/admin/partners');

    expect(codesOf(checkout)).toEqual(expect.arrayContaining(['API_KEY_MISSING', 'HMAC_INVALID', 'RATE_LIMITED', 'IDEMPOTENCY_KEY_IN_USE', 'IDEMPOTENCY_KEY_REUSED', 'PAYLOAD_TOO_LARGE', 'KYC_NOT_APPROVED']));
    expect(Object.keys(checkout['429']!.headers!)).toEqual(expect.arrayContaining(['Retry-After']));
    expect(Object.keys(checkout['409']!.headers!)).toEqual(expect.arrayContaining(['Retry-After', 'Idempotent-Replayed']));
    expect(Object.keys(checkout['201']!.headers!)).toEqual(['x-request-id', 'Idempotent-Replayed']);
    expect(checkout['400']!.content!['application/json']!.schema).toEqual({ anyOf: [{ $ref: '#/components/schemas/ValidationError' }, { $ref: '#/components/schemas/Error' }] });
    expect(codesOf(list)).toEqual(expect.arrayContaining(['API_KEY_INVALID', 'VALIDATION_ERROR']));
    expect(codesOf(list)).not.toEqual(expect.arrayContaining(['RATE_LIMITED']));
    expect(codesOf(list).filter((code) => code.startsWith('HMAC_') || code.startsWith('IDEMPOTENCY_') || code.startsWith('ADMIN_'))).toEqual([]);
    expect(Object.keys(list['200']!.headers!)).toEqual(['x-request-id']);
    expect(codesOf(admin)).toEqual(expect.arrayContaining(['ADMIN_TOKEN_INVALID', 'ADMIN_FORBIDDEN']));
    expect(codesOf(admin).filter((code) => code.startsWith('API_KEY_'))).toEqual([]);
  });

  it('documents the partner webhook the service sends, with both signatures', () => {
    const webhook = (document.webhooks as Record<string, { post: { parameters: Array<{ name: string }>; requestBody: unknown } }>)['transaction-event']!.post;

    expect(webhook.parameters.map((parameter) => parameter.name).sort()).toEqual(['webhook-id', 'webhook-signature', 'webhook-timestamp', 'x-svc-event-id', 'x-svc-signature', 'x-svc-timestamp']);
    expect(webhook.requestBody).toEqual({ required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/PartnerWebhook' } } } });
  });

  it('names the security each route takes: the API key (and the body signature on mutations), the admin token, or none', () => {
    const paths = document.paths as Record<string, Record<string, { security: unknown[] }>>;

    expect(paths['/api/v1/transactions/checkout-intent']!.post!.security).toEqual([{ apiKey: [], bodySignature: [] }]);
    expect(paths['/api/v1/transactions']!.get!.security).toEqual([{ apiKey: [] }]);
    expect(paths['/api/v1/admin/partners']!.post!.security).toEqual([{ adminBearer: [] }]);
    expect(paths['/api/v1/health']!.get!.security).toEqual([]);
    expect(paths['/api/v1/webhooks/processor']!.post!.security).toEqual([{ processorSignature: [] }]);
  });

  it('is what docs/openapi.json holds, and docs/api.md its Markdown rendering (run `npm run openapi` after changing a route)', () => {
    expect(readFileSync(OPENAPI_FILE, 'utf8')).toBe(serializeOpenApi(document));
    expect(readFileSync(API_MARKDOWN_FILE, 'utf8')).toBe(renderApiMarkdown(document));
  });

  it('renders in docs/api.md every route, its required body fields, and the Transaction and Settlement batch resources', () => {
    const markdown = renderApiMarkdown(document);

    for (const route of routes.filter((candidate) => candidate.method !== 'HEAD')) expect(markdown).toContain(`\`${route.method} ${route.path}\``);
    expect(markdown).toMatch(/\| `amount` \| number \| yes \|/);
    expect(markdown).toContain('### Transaction\n');
    expect(markdown).toContain('### SettlementBatch\n');
    expect(markdown).toMatch(/\| `TX_NOT_FOUND` \| 404 \|/);
  });
});
