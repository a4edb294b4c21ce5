/**
 * The OpenAPI 3.1 document of the service, built from the route table and each route's own contract: the zod
 * schemas its chain validates with (`httpRoute` options: body, query, path parameters), and its `doc`
 * (`lib/http/route-doc.ts`: summary, success responses with their zod schemas, its own error codes). The error
 * codes its access steps and validation bring are added here from the same options, each with the status
 * `lib/domain/errors.ts` gives it. Nothing is kept by hand: `npm run openapi` writes `docs/openapi.json`, which
 * the service serves at `GET /api/v1/openapi.json`, and a test fails when the two differ.
 */
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject, type ZodOpenApiResponsesObject } from 'zod-openapi';
import type { oas31 } from 'zod-openapi';
import { fileURLToPath } from 'node:url';
import * as z from 'zod';
import { errors, ServiceError } from '../../lib/domain/errors';
import type { RouteContract } from '../../lib/http/chain';
import { IDEMPOTENCY_KEY_PATTERN } from '../../lib/http/access';
import { MAX_BODY_BYTES } from '../../lib/http/json-limits';
import { REQUEST_ID_HEADER } from '../../lib/http/response';
import { ErrorBody, PartnerWebhookBody, ValidationErrorBody } from '../../lib/http/response-schemas';
import { API_TAGS, type RouteDoc } from '../../lib/http/route-doc';
import { API_PREFIX, type RouteDefinition, routes } from '../../lib/routes';

export const OPENAPI_VERSION = '3.1.0';

/** The document as `npm run openapi` writes it, and the service serves it. */
export const OPENAPI_FILE = fileURLToPath(new URL('../../docs/openapi.json', import.meta.url));

/** The file's text: two-space indented JSON, with a final newline. */
export const serializeOpenApi = (document: Record<string, unknown>) => `${JSON.stringify(document, null, 2)}\n`;

export interface CatalogEntry {
  status: number;
  /** The factory's message (a 5xx's is not shown to callers: the generic text is). */
  message: string;
  /** The headers the error answer carries (`Retry-After`...), by name. */
  headers: string[];
}

/** Every error code the service answers with, its status and message: read off the factories themselves. */
export function errorCatalog(): Map<string, CatalogEntry> {
  const catalog = new Map<string, CatalogEntry>([['INTERNAL_ERROR', { status: 500, message: 'Internal server error', headers: [] }]]);
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
    if (error instanceof ServiceError) catalog.set(error.code, { status: error.status, message, headers: Object.keys(error.headers) });
  }
  return catalog;
}

/** The codes a route answers with whatever its work: those its chain's steps declare (`routeSteps` in `chain.ts`). */
export const chainErrorCodes = (contract: RouteContract): readonly string[] => contract.stepErrorCodes;

/** Every code a route may answer with: its chain's and its own, no duplicates. */
export const routeErrorCodes = (contract: RouteContract): string[] => [...new Set([...chainErrorCodes(contract), ...(contract.doc?.errors ?? [])])];

/** Loads each HTTP function's contract (the `contract` its `httpRoute` handler carries), by function name. */
export async function loadContracts(only?: ReadonlySet<string>): Promise<Map<string, RouteContract>> {
  const contracts = new Map<string, RouteContract>();
  for (const name of new Set(routes.map((route) => route.name).filter((name) => only?.has(name) ?? true))) {
    const module = (await import(`../../functions/${name}.ts`)) as { handler?: { contract?: RouteContract } };
    const contract = module.handler?.contract;
    if (contract === undefined) throw new Error(`functions/${name}.ts has no httpRoute contract`);
    contracts.set(name, contract);
  }
  return contracts;
}

/** What each response header the document names carries. */
const HEADER_DOCS: Record<string, string> = {
  'Retry-After': 'Seconds to wait before retrying (a mutation: with the same idempotency key)',
  'Idempotent-Replayed': '`true` on a replayed answer (the same idempotency key and body as an earlier request); absent otherwise',
};

/** Response headers by name, each with its description; every answer also carries the request id. */
function responseHeaders(names: Iterable<string>, described: Record<string, string> = {}): oas31.HeadersObject {
  const headers: oas31.HeadersObject = { [REQUEST_ID_HEADER]: { $ref: '#/components/headers/RequestId' } };
  for (const name of names) {
    const description = described[name] ?? HEADER_DOCS[name];
    if (description === undefined) throw new Error(`response header ${name} has no description (HEADER_DOCS)`);
    headers[name] = { description, schema: { type: 'string' } };
  }
  return headers;
}

/** An example of a code's body: the factory's message (VALIDATION_ERROR: with the `details` it always has). */
function errorExample(code: string, entry: CatalogEntry) {
  if (code !== 'VALIDATION_ERROR') return { error: entry.message, code };
  return { error: 'Request body validation failed', code, details: { fieldErrors: { amount: ['amount must be greater than 0'] }, formErrors: [] } };
}

type DocumentedResponse = { description: string; headers?: oas31.HeadersObject; content?: Record<string, { schema: z.ZodType }> };

/**
 * The error answers, one per status, each code an example, with the headers its codes carry. A status the route
 * also answers with success (health's 503) keeps that answer: its body is then either. A HEAD's have no body.
 */
function errorResponses(
  codes: readonly string[],
  catalog: Map<string, CatalogEntry>,
  success: ZodOpenApiResponsesObject,
  options: { isHead: boolean; isMutation: boolean },
): ZodOpenApiResponsesObject {
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
        const alongside = (success as Record<string, DocumentedResponse>)[String(status)];
        const codesText = statusCodes.map((code) => `\`${code}\``).join(', ');
        const successBody = alongside?.content?.['application/json']?.schema;
        const bodies = [
          ...(successBody === undefined ? [] : [successBody]),
          ...(statusCodes.includes('VALIDATION_ERROR') ? [ValidationErrorBody] : []),
          ...(statusCodes.some((code) => code !== 'VALIDATION_ERROR') ? [ErrorBody] : []),
        ];
        const schema = bodies.length === 1 ? bodies[0]! : z.union(bodies as [z.ZodType, z.ZodType, ...z.ZodType[]]);
        return [
          String(status),
          {
            description: alongside === undefined ? codesText : `${alongside.description}; or an error: ${codesText}`,
            // A mutation's stored answers (a 409 CLIENT_EXISTS...) are replayed like its successes.
            headers: {
              ...alongside?.headers,
              ...responseHeaders(new Set([...statusCodes.flatMap((code) => catalog.get(code)!.headers), ...(options.isMutation ? ['Idempotent-Replayed'] : [])])),
            },
            ...(options.isHead
              ? {}
              : {
                  content: {
                    'application/json': {
                      schema,
                      examples: Object.fromEntries(statusCodes.map((code) => [code, { value: errorExample(code, catalog.get(code)!) }])),
                    },
                  },
                }),
          },
        ];
      }),
  );
}

const PATH_PARAMETER = /\{([A-Za-z0-9_]+)\}/g;

function operation(route: RouteDefinition, contract: RouteContract, catalog: Map<string, CatalogEntry>): ZodOpenApiOperationObject {
  const doc = contract.doc;
  if (doc === undefined) throw new Error(`${route.method} ${route.path} (functions/${route.name}.ts) has no doc`);
  if (route.method === 'OPTIONS') return preflightOperation(route, doc);
  const isHead = route.method === 'HEAD';
  const isMutation = contract.access === 'partner-mutation';
  const success: ZodOpenApiResponsesObject = Object.fromEntries(
    Object.entries(doc.responses).map(([status, response]) => [
      status,
      {
        description: response.description,
        headers: responseHeaders([...Object.keys(response.headers ?? {}), ...(isMutation ? ['Idempotent-Replayed'] : [])], response.headers),
        ...(response.schema === undefined || isHead ? {} : { content: { [response.contentType ?? 'application/json']: { schema: response.schema } } }),
      },
    ]),
  );
  const security = securityOf(contract);
  const headers = isMutation
    ? {
        'idempotency-key': z
          .string()
          .regex(IDEMPOTENCY_KEY_PATTERN)
          .meta({ description: 'One per logical operation (e.g. `checkout-<partner_reference>`); 1-255 printable ASCII characters', example: 'checkout-order-1042' }),
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
    responses: { ...success, ...errorResponses(routeErrorCodes(contract), catalog, success, { isHead, isMutation }) },
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
        headers: responseHeaders(Object.keys(headers ?? {}), headers),
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
      return contract.doc?.authentication === 'processor-signature' ? [{ processorSignature: [] }] : undefined;
  }
}

/** The partner webhook the service sends (OpenAPI 3.1 `webhooks`): its body and signature headers. */
function partnerWebhook(): ZodOpenApiOperationObject {
  const header = (description: string, example: string) => z.string().meta({ description, example });
  return {
    operationId: 'partner_webhook',
    summary: 'A transaction event, POSTed to your webhook endpoint',
    description:
      'Sent to every endpoint of the partner subscribed to the event, signed twice over the same exact body: verify either (the Standard Webhooks ' +
      'headers also sign the id and timestamp: prefer them). Deduplicate by `webhook-id` (the same on every attempt and resend) and apply by ' +
      '`svc_tx_id`. Any 2xx within 10 seconds is delivered; anything else is retried: 3 attempts in all, after about 1 and 4 times ' +
      '`WEBHOOK_RETRY_BASE_MS` (default 1 s). A redirect is not followed.',
    tags: ['Partner webhooks'],
    security: [],
    requestParams: {
      header: z.object({
        'webhook-id': header('The event id: the same on every attempt and resend', 'evt_0f3k9m2p7q8r1s4t5v6w7x8y'),
        'webhook-timestamp': header('Unix seconds of this attempt; refuse one more than 5 minutes from your clock', '1795460648'),
        'webhook-signature': header(
          '`v1,` + base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`, keyed by the base64-decoded part of the endpoint secret after `whsec_` (Standard Webhooks)',
          'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
        ),
        'x-svc-signature': header('Lowercase hex HMAC-SHA256 of the exact body, keyed by the whole endpoint secret string (`whsec_…`)', '5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd'),
        'x-svc-event-id': header('The event id (as `webhook-id`)', 'evt_0f3k9m2p7q8r1s4t5v6w7x8y'),
        'x-svc-timestamp': header('Unix seconds of this attempt (as `webhook-timestamp`; not covered by `x-svc-signature`)', '1795460648'),
      }),
    },
    requestBody: { required: true, content: { 'application/json': { schema: PartnerWebhookBody } } },
    responses: { '2XX': { description: 'Received: the delivery is done' } },
  };
}

/**
 * Scalar's viewer (the reference page) warns of a schema with no `type`: a nullable's `anyOf` gets its members'
 * types beside it (`["integer", "null"]`: what the `anyOf` already says), and `additionalProperties: {}` is
 * written `true` (the same meaning).
 */
function typedForViewers({ jsonSchema }: { jsonSchema: Record<string, unknown> }): void {
  const extra = jsonSchema.additionalProperties;
  if (typeof extra === 'object' && extra !== null && Object.keys(extra).length === 0) jsonSchema.additionalProperties = true;
  const members = jsonSchema.anyOf;
  if (jsonSchema.type !== undefined || !Array.isArray(members)) return;
  const types = (members as Array<{ type?: unknown }>).map((member) => member.type);
  if (types.every((type) => typeof type === 'string' || (Array.isArray(type) && type.every((name) => typeof name === 'string')))) {
    jsonSchema.type = [...new Set(types.flat() as string[])];
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
        `replay the first answer for 24 hours. Request bodies are at most ${MAX_BODY_BYTES} bytes. A path no route serves is 404 ` +
        '`NOT_FOUND`; a method its path does not serve, 405 `METHOD_NOT_ALLOWED` with an `Allow` header. Before any route: a request of ' +
        'more than 10 MB is 413 `PAYLOAD_TOO_LARGE` (the gateway\'s limit), headers too large 431 `HEADERS_TOO_LARGE` and a request that ' +
        'is not HTTP 400 `BAD_REQUEST` (locally; API Gateway answers these itself in AWS).',
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
        processorSignature: {
          type: 'apiKey',
          in: 'header',
          name: 'processor-signature',
          description:
            "The card processor's signature of the exact body, `t=<unix seconds>,v1=<hex HMAC-SHA256 of \"<t>.<body>\">` with the webhook secret (Stripe's " +
            'scheme; `stripe-signature` is read when it is absent); more than 5 minutes old is refused',
        },
      },
      headers: {
        RequestId: { description: 'The request id, also in the service\'s log lines: quote it when asking about a request', schema: { type: 'string' } },
      },
    },
    paths,
    webhooks: { 'transaction-event': { post: partnerWebhook() } },
  }, { override: typedForViewers });
  return JSON.parse(JSON.stringify(document)) as Record<string, unknown>;
}
