/**
 * Holds an answer of the service to its documented contract (the OpenAPI document's sources, `infra/openapi.ts`):
 * a success status the route documents, with a body its zod response schema accepts; an error in the spec's body,
 * with a code the route documents, under that code's status. Returns what is wrong, or undefined.
 */
import type { RouteContract } from '../../lib/http/chain';
import { ErrorBody } from '../../lib/http/response-schemas';
import { errorCatalog, loadContracts, routeErrorCodes } from '../../infra/openapi';
import { resolveRoute } from '../../infra/routes';

let contracts: Promise<Map<string, RouteContract>> | undefined;
const catalog = errorCatalog();

export interface Answer {
  method: string;
  /** The path, with its query string if any. */
  url: string;
  status: number;
  contentType: string | null;
  text: string;
}

export async function contractViolation(answer: Answer): Promise<string | undefined> {
  const path = answer.url.split('?')[0]!;
  const match = resolveRoute(answer.method, path);
  const isError = answer.status >= 400;
  if (!('route' in match)) {
    // No route: API Gateway's `$default` answers 404 or 405 (a HEAD's without a body).
    if (!isError) return `${answer.status} on a path no route serves`;
    return answer.method === 'HEAD' ? undefined : errorViolation(answer, ['NOT_FOUND', 'METHOD_NOT_ALLOWED']);
  }
  contracts ??= loadContracts();
  const contract = (await contracts).get(match.route.name);
  if (contract?.doc === undefined) return `${match.route.name} has no doc`;
  if (match.route.method === 'OPTIONS') return answer.status === 204 && contract.doc.preflight !== undefined ? undefined : `a preflight answered ${answer.status}`;
  const documented = contract.doc.responses[answer.status];
  if (documented !== undefined) {
    if (answer.method === 'HEAD' || documented.schema === undefined) return undefined;
    if ((documented.contentType ?? 'application/json') !== 'application/json') {
      return answer.contentType?.startsWith(documented.contentType!) === true ? undefined : `content-type ${answer.contentType}, documented ${documented.contentType}`;
    }
    const parsed = documented.schema.safeParse(parseJson(answer.text));
    if (parsed.success || !isError) return parsed.success ? undefined : `body does not match the documented ${answer.status}: ${parsed.error.message}`;
  }
  if (!isError) return `status ${answer.status} is not documented`;
  return answer.method === 'HEAD' ? undefined : errorViolation(answer, routeErrorCodes(contract));
}

function errorViolation(answer: Answer, codes: readonly string[]): string | undefined {
  const parsed = ErrorBody.safeParse(parseJson(answer.text));
  if (!parsed.success) return `an error body that is not the spec's: ${answer.text.slice(0, 200)}`;
  const { code } = parsed.data;
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
