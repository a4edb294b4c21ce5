/**
 * Form-encoded parameters, parsed the way Stripe's API parses them (`metadata[k]=v`, `payment_method_types[0]=card`,
 * `expand[]=x`): the stripe SDK sends every request body, and every GET's query, in this encoding.
 */
import { invalidRequest, type ApiError } from './errors';

export type FormValue = string | FormValue[] | FormHash;
export interface FormHash {
  [key: string]: FormValue;
}

/**
 * Deeper nesting is refused. Stripe's deepest parameters have five levels; the limit keeps a hostile body (a
 * megabyte of `[a]`) from exhausting the stack of anything that walks the parsed parameters.
 */
const MAX_NESTING = 32;

/** A `[key]` level of parameters (a list is an array, a value a string). */
export function isHash(value: FormValue | undefined): value is FormHash {
  return typeof value === 'object' && !Array.isArray(value);
}

/** A body the sandbox cannot read as parameters: Stripe's wording, with what it takes instead. */
export function malformed(detail: string): ApiError {
  return invalidRequest(`Invalid request body: ${detail}. The processor sandbox, like Stripe, takes application/x-www-form-urlencoded parameters.`);
}

/**
 * `a=1&b[c]=2&d[]=x&d[]=y&e[0]=z` -> `{ a: '1', b: { c: '2' }, d: ['x', 'y'], e: { '0': 'z' } }`. Indexed
 * keys (`e[0]`) stay hash keys here; a parameter that is a list reads them in index order (`Params`).
 * Objects have no prototype, so keys such as `__proto__` are plain keys.
 */
export function parseForm(body: string): FormHash {
  const root: FormHash = Object.create(null) as FormHash;
  for (const pair of body.split('&')) {
    if (pair === '') continue;
    const separator = pair.indexOf('=');
    const name = decodeComponent(separator === -1 ? pair : pair.slice(0, separator));
    const value = separator === -1 ? '' : decodeComponent(pair.slice(separator + 1));
    const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(name);
    if (match === null) throw malformed(`invalid parameter name "${name}"`);
    const path = [match[1] ?? '', ...[...(match[2] ?? '').matchAll(/\[([^[\]]*)\]/g)].map((segment) => segment[1] ?? '')];
    if (path.length - 1 > MAX_NESTING) throw malformed(`"${path[0]}" is nested more than ${MAX_NESTING} levels deep`);
    const pushing = path.length > 1 && path[path.length - 1] === '';
    const keys = pushing ? path.slice(0, -1) : path;
    if (keys.includes('')) throw malformed(`invalid parameter name "${name}"`);
    let node = root;
    for (const key of keys.slice(0, -1)) {
      const existing = node[key];
      if (existing === undefined) {
        const child = Object.create(null) as FormHash;
        node[key] = child;
        node = child;
      } else if (isHash(existing)) {
        node = existing;
      } else {
        throw malformed(`"${name}" conflicts with another parameter of the same name`);
      }
    }
    const leaf = keys[keys.length - 1] ?? '';
    const existing = node[leaf];
    if (pushing) {
      if (existing === undefined) node[leaf] = [value];
      else if (Array.isArray(existing)) existing.push(value);
      else throw malformed(`"${name}" conflicts with another parameter of the same name`);
    } else if (existing === undefined || typeof existing === 'string') {
      node[leaf] = value; // a repeated scalar: the last one wins, as in Stripe's (Rack's) parser
    } else {
      throw malformed(`"${name}" conflicts with another parameter of the same name`);
    }
  }
  return root;
}

function decodeComponent(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    throw malformed('bad percent-encoding');
  }
}

/** A canonical text of parsed parameters (key order ignored), to compare requests under one idempotency key. */
export function canonical(value: FormValue): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  return `{${Object.keys(value)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonical(value[key] ?? '')}`)
    .join(',')}}`;
}
