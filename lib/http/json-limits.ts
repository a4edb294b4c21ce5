/**
 * Limits on the JSON callers send, checked without recursion. A body of up to 10 MB can nest millions of levels
 * deep (JSON.parse copes; JSON.stringify overflows the stack at a few thousand) or hold hundreds of thousands
 * of keys, so nothing here calls itself or serialises what it measures: each check walks the parsed value with
 * its own stack, and stops at the first limit passed.
 */

/**
 * How deep any request body may nest, the body itself being level 1. The deepest thing a route takes is `meta`
 * (32 levels, one level down); the rest is headroom, far below where recursion would fail.
 */
export const MAX_BODY_DEPTH = 64;

/** An unpaired UTF-16 surrogate (`\ud800`-`\udfff` alone): a pair is one code point to a `u` regex. */
const LONE_SURROGATE = /\p{Cs}/u;

/** A `\uD800`-`\uDFFF` escape in JSON text (or text that merely looks like one, such as `\\ud800`). */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

const LONE_SURROGATE_REASON = 'a lone surrogate (\\ud800-\\udfff) cannot be encoded as UTF-8';

/** What a body breaks, and the top-level field it sits in (`undefined`: the body itself, or a field's name). */
export interface JsonFault {
  field: string | undefined;
  message: string;
}

/**
 * The first thing in a JSON body that no route takes, or `undefined`:
 * - a string or key holding a lone surrogate (`"x\ud800"` is valid JSON, but no UTF-8 encoding carries it:
 *   the stripe SDK throws a URIError form-encoding it, and nothing downstream could store it faithfully);
 * - nesting deeper than {@link MAX_BODY_DEPTH} levels.
 * `json` is `text` parsed. The text is looked at first, which is cheap: with no surrogate in it, no surrogate
 * escape and at most {@link MAX_BODY_DEPTH} `[` or `{` anywhere, the body can hold neither, and a body of
 * 400,000 keys is not walked. Otherwise the parsed body is walked, depth first, to find the fault and its
 * field (a body nested 5,000,000 levels deep is refused after {@link MAX_BODY_DEPTH} steps).
 */
export function findJsonFault(text: string, json: unknown): JsonFault | undefined {
  const mayHoldSurrogate = LONE_SURROGATE.test(text) || SURROGATE_ESCAPE.test(text);
  return mayHoldSurrogate || mayNestTooDeep(text) ? walkForFault(json) : undefined;
}

/** A text with at most {@link MAX_BODY_DEPTH} `[` and `{`, inside strings or not, cannot nest deeper. */
function mayNestTooDeep(text: string): boolean {
  const opening = /[[{]/g;
  let count = 0;
  while (opening.exec(text) !== null) if (++count > MAX_BODY_DEPTH) return true;
  return false;
}

function walkForFault(json: unknown): JsonFault | undefined {
  const pending: Array<{ value: unknown; depth: number; field: string | undefined }> = [{ value: json, depth: 1, field: undefined }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value, depth, field } = next;
    if (typeof value === 'string') {
      if (LONE_SURROGATE.test(value)) return { field, message: `Must be well-formed Unicode: ${LONE_SURROGATE_REASON}` };
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth > MAX_BODY_DEPTH) return { field, message: `Nested too deeply: a request body may have at most ${MAX_BODY_DEPTH} levels` };
    for (const [key, child] of Object.entries(value)) {
      if (LONE_SURROGATE.test(key)) return { field, message: `Field names must be well-formed Unicode: ${LONE_SURROGATE_REASON}` };
      pending.push({ value: child, depth: depth + 1, field: depth === 1 && !Array.isArray(value) ? key : field });
    }
  }
  return undefined;
}

/** A JSON object as JSON.parse makes it: own keys only, so `__proto__` and `constructor` are plain keys. */
export type JsonObject = { [key: string]: unknown };

export const isJsonObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype;

export interface JsonLimits {
  /** Keys of the object itself. */
  maxKeys: number;
  /** Levels, the object itself being level 1. */
  maxDepth: number;
  /** Bytes of `JSON.stringify(object)` in UTF-8. */
  maxBytes: number;
}

/**
 * The first limit a JSON object passes, as a message for the caller, or `undefined`. The size is counted as
 * JSON.stringify would write it, byte for byte, while walking, so the walk ends once `maxBytes` is passed: a
 * meta of 400,000 keys is refused after reading a few hundred of them, and never serialised.
 */
export function exceededLimit(object: JsonObject, limits: JsonLimits): string | undefined {
  const tooLarge = `At most ${limits.maxBytes} bytes serialised (UTF-8)`;
  let bytes = 0;
  const pending: Array<{ value: object; depth: number }> = [{ value: object, depth: 1 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value, depth } = next;
    if (depth > limits.maxDepth) return `At most ${limits.maxDepth} levels of nesting`;
    const isArray = Array.isArray(value);
    bytes += 2; // {} or []
    let count = 0;
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      count += 1;
      if (depth === 1 && count > limits.maxKeys) return `At most ${limits.maxKeys} keys`;
      if (count > 1) bytes += 1; // ,
      if (!isArray) bytes += textBytes(key, limits.maxBytes - bytes) + 1; // "key":
      const child: unknown = (value as JsonObject)[key];
      if (typeof child === 'object' && child !== null) pending.push({ value: child, depth: depth + 1 });
      else bytes += textBytes(child, limits.maxBytes - bytes);
      if (bytes > limits.maxBytes) return tooLarge;
    }
  }
  return bytes > limits.maxBytes ? tooLarge : undefined;
}

/**
 * The UTF-8 bytes JSON.stringify writes for a key or a value that is not an object or array. A string longer
 * than what is left of the budget is over it without being escaped and measured (each of its UTF-16 units
 * takes at least a byte), so no large string is copied.
 */
function textBytes(value: unknown, budget: number): number {
  if (typeof value === 'string' && value.length > budget) return value.length;
  return Buffer.byteLength(JSON.stringify(value) ?? 'null', 'utf8');
}
