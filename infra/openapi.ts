/**
 * The OpenAPI 3.1 document of the service, built from the route table and each route's own contract: the zod
 * schemas its chain validates with (`httpRoute` options: body, query, path parameters), and its `doc`
 * (`lib/http/route-doc.ts`: summary, success responses with their zod schemas, its own error codes). The error
 * codes its access steps and validation bring are added here from the same options, each with the status
 * `lib/domain/errors.ts` gives it. Nothing is kept by hand: `npm run openapi` writes `docs/openapi.json`, which
 * the service serves at `GET /api/v1/openapi.json`, and a test fails when the two differ.
 */
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject, type ZodOpenApiResponsesObject } from 'zod-openapi';
import { fileURLToPath } from 'node:url';
import * as z from 'zod';
import { errors, ServiceError } from '../lib/domain/errors';
import type { RouteContract } from '../lib/http/chain';
import { MAX_BODY_BYTES } from '../lib/http/json-limits';
import { ErrorBody } from '../lib/http/response-schemas';
import { API_TAGS, type RouteDoc } from '../lib/http/route-doc';
import { API_PREFIX, type RouteDefinition, routes } from './routes';

export const OPENAPI_VERSION = '3.1.0';

/** The document as `npm run openapi` writes it, and the service serves it. */
export const OPENAPI_FILE = fileURLToPath(new URL('../docs/openapi.json', import.meta.url));

/** The file's text: two-space indented JSON, with a final newline. */
export const serializeOpenApi = (document: Record<string, unknown>) => `${JSON.stringify(document, null, 2)}\n`;

export interface CatalogEntry {
  status: number;
  /** The factory's message (a 5xx's is not shown to callers: the generic text is). */
  message: string;
}

/** Every error code the service answers with, its status and message: read off the factories themselves. */
export function errorCatalog(): Map<string, CatalogEntry> {
  const catalog = new Map<string, CatalogEntry>([['INTERNAL_ERROR', { status: 500, message: 'Internal server error' }]]);
  for (const factory of Object.values(errors) as Array<(...args: unknown[]) => unknown>) {
    // A factory's arguments shape the message or headers, never the code or status; a list it may need is given empty.
    let error: unknown;
    try {
      error = factory();
    } catch {
      error = factory([]);
    }
    // The message as an example: what a factory fills in from its arguments is shown as "…".
    const message = (error as ServiceError).expose ? (error as ServiceError).message.replaceAll(/undefined|NaN/g, '…') : 'The service could not complete the request';
    if (error instanceof ServiceError) catalog.set(error.code, { status: error.status, message });
  }
  return catalog;
}

/** The codes a route answers with whatever its work: from its access steps, its input and the chain. */
export function chainErrorCodes(contract: RouteContract): string[] {
  // VALIDATION_ERROR on every route: a body that is not valid UTF-8 is refused before any route reads it.
  const codes = ['INTERNAL_ERROR', 'SERVICE_UNAVAILABLE', 'REQUEST_TIMED_OUT', 'VALIDATION_ERROR'];
  if (contract.body !== undefined || contract.maxBodyBytes !== undefined) codes.push('PAYLOAD_TOO_LARGE');
  if (contract.access === 'admin') codes.push('ADMIN_TOKEN_INVALID', 'ADMIN_FORBIDDEN');
  // The key's partner is read with the key: gone (deleted under a live key), PARTNER_NOT_FOUND.
  if (contract.access === 'partner-read' || contract.access === 'partner-mutation') codes.push('API_KEY_MISSING', 'API_KEY_INVALID', 'API_KEY_SCOPE_FORBIDDEN', 'PARTNER_NOT_FOUND');
  if (contract.access === 'partner-mutation') {
    codes.push('HMAC_MISSING', 'HMAC_INVALID', 'RATE_LIMITED', 'IDEMPOTENCY_KEY_MISSING', 'IDEMPOTENCY_KEY_IN_USE', 'IDEMPOTENCY_KEY_REUSED');
  }
  return codes;
}

/** Every code a route may answer with: its chain's and its own, no duplicates. */
export const routeErrorCodes = (contract: RouteContract): string[] => [...new Set([...chainErrorCodes(contract), ...(contract.doc?.errors ?? [])])];

/** Loads each HTTP function's contract (the `contract` its `httpRoute` handler carries), by function name. */
export async function loadContracts(only?: ReadonlySet<string>): Promise<Map<string, RouteContract>> {
  const contracts = new Map<string, RouteContract>();
  for (const name of new Set(routes.map((route) => route.name).filter((name) => only?.has(name) ?? true))) {
    const module = (await import(`../functions/${name}.ts`)) as { handler?: { contract?: RouteContract } };
    const contract = module.handler?.contract;
    if (contract === undefined) throw new Error(`functions/${name}.ts has no httpRoute contract`);
    contracts.set(name, contract);
  }
  return contracts;
}

/**
 * The error answers, one per status, each code an example. A status the route also answers with success (health's
 * 503) keeps that answer: its body is then either.
 */
function errorResponses(codes: readonly string[], catalog: Map<string, CatalogEntry>, success: ZodOpenApiResponsesObject): ZodOpenApiResponsesObject {
  const byStatus = new Map<number, string[]>();
  for (const code of codes) {
    const entry = catalog.get(code);
    if (entry === undefined) throw new Error(`unknown error code ${code}`);
    byStatus.set(entry.status, [...(byStatus.get(entry.status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus.entries()]
      .sort(([a], [b]) => a - b)
      .map(([status, statusCodes]) => {
        const alongside = (success as Record<string, { description: string; content?: Record<string, { schema: z.ZodType }> }>)[String(status)];
        const successSchema = alongside?.content?.['application/json']?.schema;
        const codesText = statusCodes.map((code) => `\`${code}\``).join(', ');
        return [
          String(status),
          {
            description: alongside === undefined ? codesText : `${alongside.description}; or an error: ${codesText}`,
            content: {
              'application/json': {
                schema: successSchema === undefined ? ErrorBody : z.union([successSchema, ErrorBody]),
                examples: Object.fromEntries(statusCodes.map((code) => [code, { value: { error: catalog.get(code)?.message, code } }])),
              },
            },
          },
        ];
      }),
  );
}

/** Response headers, by name, with what each carries. */
const headersSchema = (headers: Record<string, string>) =>
  z.object(Object.fromEntries(Object.entries(headers).map(([name, description]) => [name, z.string().meta({ description })])));

const PATH_PARAMETER = /\{([A-Za-z0-9_]+)\}/g;

function operation(route: RouteDefinition, contract: RouteContract, catalog: Map<string, CatalogEntry>): ZodOpenApiOperationObject {
  const doc = contract.doc;
  if (doc === undefined) throw new Error(`${route.method} ${route.path} (functions/${route.name}.ts) has no doc`);
  if (route.method === 'OPTIONS') return preflightOperation(route, doc);
  const isHead = route.method === 'HEAD';
  const success: ZodOpenApiResponsesObject = Object.fromEntries(
    Object.entries(doc.responses).map(([status, response]) => [
      status,
      {
        description: response.description,
        ...(response.headers === undefined
          ? {}
          : { headers: headersSchema(response.headers) }),
        ...(response.schema === undefined || isHead ? {} : { content: { [response.contentType ?? 'application/json']: { schema: response.schema } } }),
      },
    ]),
  );
  const security = securityOf(contract);
  const headers = contract.access === 'partner-mutation'
    ? {
        'idempotency-key': z.string().min(1).max(255).meta({ description: 'One per logical operation (e.g. `checkout-<partner_reference>`); 1-255 printable ASCII characters' }),
      }
    : undefined;
  return {
    operationId: `${route.method.toLowerCase()}_${route.name.replaceAll('-', '_')}`,
    summary: isHead ? `${doc.summary} (headers only)` : doc.summary,
    ...(doc.description === undefined ? {} : { description: doc.description }),
    tags: [doc.tag],
    ...(security === undefined ? { security: [] } : { security }),
    requestParams: {
      ...(contract.params === undefined ? {} : { path: contract.params as never }),
      ...(contract.query === undefined ? {} : { query: contract.query as never }),
      ...(headers === undefined ? {} : { header: z.object(headers) }),
    },
    ...(contract.body === undefined || isHead
      ? {}
      : {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: contract.body as never, ...(doc.example === undefined ? {} : { example: doc.example }) } },
          },
        }),
    responses: { ...success, ...(isHead ? {} : errorResponses(routeErrorCodes(contract), catalog, success)) },
  };
}

/** A CORS route's preflight: answered 204 by the chain's first steps, before its input is read. */
function preflightOperation(route: RouteDefinition, doc: RouteDoc): ZodOpenApiOperationObject {
  if (doc.preflight === undefined) throw new Error(`${route.method} ${route.path} (functions/${route.name}.ts) has no preflight doc`);
  const { description, headers } = doc.preflight;
  return {
    operationId: `options_${route.name.replaceAll('-', '_')}`,
    summary: `CORS preflight of: ${doc.summary}`,
    tags: [doc.tag],
    security: [],
    responses: {
      204: {
        description,
        ...(headers === undefined ? {} : { headers: headersSchema(headers) }),
      },
    },
  };
}

function securityOf(contract: RouteContract): Array<Record<string, string[]>> | undefined {
  switch (contract.access) {
    case 'admin':
      return [{ adminBearer: [] }];
    case 'partner-read':
      return [{ apiKey: [] }];
    case 'partner-mutation':
      return [{ apiKey: [], bodySignature: [] }];
    case 'public':
      return undefined;
  }
}

/**
 * The document (a plain JSON object), built from the route table and the functions' contracts; `only` limits
 * it to the routes of some functions (while documenting them).
 */
export async function buildOpenApiDocument(options: { only?: ReadonlySet<string> } = {}): Promise<Record<string, unknown>> {
  const byName = await loadContracts(options.only);
  const catalog = errorCatalog();
  const paths: ZodOpenApiPathsObject = {};
  for (const route of routes.filter((candidate) => options.only?.has(candidate.name) ?? true)) {
    const contract = byName.get(route.name);
    if (contract === undefined) throw new Error(`no contract for ${route.name}`);
    const missing = [...route.path.matchAll(PATH_PARAMETER)].map((match) => match[1]).filter((name) => contract.params === undefined || !(name! in ((contract.params as z.ZodObject).shape ?? {})));
    if (missing.length > 0) throw new Error(`${route.method} ${route.path}: path parameters without a schema: ${missing.join(', ')}`);
    const item = (paths[route.path] ??= {});
    (item as Record<string, ZodOpenApiOperationObject>)[route.method.toLowerCase()] = operation(route, contract, catalog);
  }
  const document = createDocument({
    openapi: OPENAPI_VERSION,
    info: {
      title: 'Partner Payments Service',
      version: '1.0.0',
      description:
        'Card payments for partners\' merchants: checkout intents at the card processor, the transaction lifecycle, fee splits, signed ' +
        'partner webhooks, settlement batches and payouts. Amounts are in major units of the currency; every error body is ' +
        '`{ "error", "code" }` (VALIDATION_ERROR adds `details`). Mutations take an `idempotency-key`: the same key and body ' +
        `replay the first answer for 24 hours. Request bodies are at most ${MAX_BODY_BYTES} bytes.`,
    },
    servers: [{ url: '/', description: `This service (every path starts with ${API_PREFIX})` }],
    tags: Object.entries(API_TAGS).map(([name, description]) => ({ name, description })),
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: "The partner's API key (or a platform-wide key)" },
        bodySignature: {
          type: 'apiKey',
          in: 'header',
          name: 'x-svc-hmac',
          description: 'HMAC-SHA256 of the exact raw request body with the key\'s HMAC secret, lowercase hex',
        },
        adminBearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'An admin token: a JWT with `role: "admin"`' },
      },
    },
    paths,
  });
  return JSON.parse(JSON.stringify(document)) as Record<string, unknown>;
}
