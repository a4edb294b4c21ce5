/**
 * Holds an answer of the service to its documented contract (the OpenAPI document, `infra/openapi/document.ts`): a status
 * the operation documents; a success body its zod response schema accepts; an error in the spec's body (with
 * `details` for VALIDATION_ERROR), with a code the route documents, under that code's status; and the headers
 * that tell a caller what to do (`Retry-After`, `Idempotent-Replayed`, `Allow`) only where the document names
 * them. Returns what is wrong, or undefined.
 */
import type { RouteContract } from '../../lib/http/chain';
import { ErrorBody, errorBodyOf } from '../../lib/http/response-schemas';
import { buildOpenApiDocument, errorCatalog, loadContracts, routeErrorCodes } from '../../infra/openapi/document';
import { resolveRoute } from '../../lib/routes';

let contracts: Promise<Map<string, RouteContract>> | undefined;
let document: Promise<Record<string, unknown>> | undefined;
const catalog = errorCatalog();

/** Headers a caller acts on: each must be documented for the answer that carries it. */
const WATCHED_HEADERS = ['retry-after', 'idempotent-replayed'];

export interface Answer {
  method: string;
  /** The path, with its query string if any. */
  url: string;
  status: number;
  headers: Headers;
  text: string;
}

export async function contractViolation(answer: Answer): Promise<string | undefined> {
  const path = answer.url.split('?')[0]!;
  const match = resolveRoute(answer.method, path);
  const isError = answer.status >= 400;
  if (!('route' in match)) {
    // No route: API Gateway's `$default` answers 404, or 405 with `Allow` (a HEAD's without a body).
    if (!isError) return `${answer.status} on a path no route serves`;
    if (answer.status === 405 && answer.headers.get('allow') === null) return 'a 405 without Allow';
    return answer.method === 'HEAD' ? undefined : errorViolation(answer, ['NOT_FOUND', 'METHOD_NOT_ALLOWED']);
  }
  contracts ??= loadContracts();
  const contract = (await contracts).get(match.route.name);
  if (contract?.doc === undefined) return `${match.route.name} has no doc`;
  if (match.route.method === 'OPTIONS') return answer.status === 204 && contract.doc.preflight !== undefined ? undefined : `a preflight answered ${answer.status}`;
  const headerViolation = await undocumentedHeader(answer, match.route.path, match.route.method);
  if (headerViolation !== undefined) return headerViolation;
  const documented = contract.doc.responses[answer.status];
  if (documented !== undefined) {
    if (answer.method === 'HEAD' || documented.schema === undefined) return undefined;
    const contentType = answer.headers.get('content-type');
    if ((documented.contentType ?? 'application/json') !== 'application/json') {
      return contentType?.startsWith(documented.contentType!) === true ? undefined : `content-type ${contentType}, documented ${documented.contentType}`;
    }
    const parsed = documented.schema.safeParse(parseJson(answer.text));
    if (parsed.success || !isError) return parsed.success ? undefined : `body does not match the documented ${answer.status}: ${parsed.error.message}`;
  }
  if (!isError) return `status ${answer.status} is not documented`;
  return answer.method === 'HEAD' ? undefined : errorViolation(answer, routeErrorCodes(contract));
}

/** A watched header the answer carries that the document does not name for its operation and status (or a status it does not list). */
async function undocumentedHeader(answer: Answer, path: string, method: string): Promise<string | undefined> {
  document ??= buildOpenApiDocument();
  const paths = (await document).paths as Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>>;
  const response = paths[path]?.[method.toLowerCase()]?.responses[String(answer.status)];
  if (response === undefined) return `status ${answer.status} is not documented for ${method} ${path}`;
  const named = new Set(Object.keys(response.headers ?? {}).map((name) => name.toLowerCase()));
  const unnamed = WATCHED_HEADERS.filter((name) => answer.headers.has(name) && !named.has(name));
  return unnamed.length === 0 ? undefined : `header ${unnamed.join(', ')} on a ${answer.status} the document does not name it for`;
}

function errorViolation(answer: Answer, codes: readonly string[]): string | undefined {
  const loose = ErrorBody.partial().loose().safeParse(parseJson(answer.text));
  const code = loose.success ? loose.data.code : undefined;
  if (code === undefined) return `an error body that is not the spec's: ${answer.text.slice(0, 200)}`;
  const parsed = errorBodyOf(code).safeParse(parseJson(answer.text));
  if (!parsed.success) return `an error body that is not the spec's ${code}: ${answer.text.slice(0, 200)}`;
  if (!codes.includes(code)) return `error code ${code} is not documented for this route (documented: ${codes.join(', ')})`;
  const status = catalog.get(code)?.status;
  return status === answer.status ? undefined : `${code} answered with ${answer.status}, documented with ${status}`;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
