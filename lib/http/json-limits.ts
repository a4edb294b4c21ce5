/**
 * Limits on the JSON callers send. The raw body is measured first, before anything parses it
 * ({@link MAX_BODY_BYTES}). What is parsed is then checked without recursion and bounded by work, not by the
 * size of the value: each walk reads an array by index (never listing its indexes), stops at the first limit
 * passed, and reads at most a fixed number of values in all. (An object's keys are listed once, when the walk
 * reaches it: JavaScript has no lazier way; the byte limit bounds how many there can be.)
 */

/**
 * The most UTF-8 bytes of raw body a route that takes JSON accepts, unless it sets its own (`maxBodyBytes` in
 * `chain.ts`). The largest body a route takes is a checkout: ~4 KB of meta and a few strings of up to 255
 * characters, ~6 KB as JSON.stringify writes it; 32 KB leaves room for escaped non-ASCII (`\u00e9`, as Python
 * writes it by default, is up to 6 bytes a character) and pretty-printing, and keeps every parse and walk small.
 */
export const MAX_BODY_BYTES = 32 * 1024;

/**
 * How deep any request body may nest, the body itself being level 1. The deepest thing a route takes is `meta`
 * (32 levels, one level down); the rest is headroom, far below where recursion would fail.
 */
const MAX_BODY_DEPTH = 64;

/**
 * How many values (objects, arrays, strings, numbers, booleans, nulls) the walk of a body reads before giving up
 * and refusing it. More than a body of {@link MAX_BODY_BYTES} can hold (each value takes at least 2 bytes with
 * its comma: at most 16,385), so only a route that raises its byte limit can meet it.
 */
export const MAX_BODY_VALUES = 20_000;

/** Whether `text` is longer than `maxBytes` in UTF-8; a string far over (or under) is not encoded to know. */
export function exceedsBytes(text: string, maxBytes: number): boolean {
  if (text.length > maxBytes) return true; // every UTF-16 unit is at least 1 byte
  if (text.length * 3 <= maxBytes) return false; // and at most 3
  return Buffer.byteLength(text, 'utf8') > maxBytes;
}

/** An unpaired UTF-16 surrogate (`\ud800`-`\udfff` alone): a pair is one code point to a `u` regex. */
export const LONE_SURROGATE = /\p{Cs}/u;

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
 * - nesting deeper than {@link MAX_BODY_DEPTH} levels;
 * - more than {@link MAX_BODY_VALUES} values, when the body has to be walked (it cannot be checked within them).
 * `json` is `text` parsed. The text is looked at first, which is cheap: with no surrogate in it, no surrogate
 * escape and at most {@link MAX_BODY_DEPTH} `[` or `{` anywhere, the body can hold neither, and is not walked.
 * Otherwise the parsed body is walked, depth first, to find the fault and its field: a body nested 5,000,000
 * levels deep is refused after {@link MAX_BODY_DEPTH} values, an array of 3,000,000 after
 * {@link MAX_BODY_VALUES}.
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
  const tooMany = { field: undefined, message: `Too many values: a request body may hold at most ${MAX_BODY_VALUES}` };
  return walkJson<JsonFault>(json, MAX_BODY_VALUES, tooMany, ({ value, depth, key, field }) => {
    if (key !== undefined && LONE_SURROGATE.test(key)) {
      return { field: depth === 2 ? undefined : field, message: `Field names must be well-formed Unicode: ${LONE_SURROGATE_REASON}` };
    }
    if (typeof value === 'string') {
      return LONE_SURROGATE.test(value) ? { field, message: `Must be well-formed Unicode: ${LONE_SURROGATE_REASON}` } : undefined;
    }
    if (typeof value === 'object' && value !== null && depth > MAX_BODY_DEPTH) {
      return { field, message: `Nested too deeply: a request body may have at most ${MAX_BODY_DEPTH} levels` };
    }
    return undefined;
  });
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
 * JSON.stringify would write it, byte for byte, while walking, so the walk ends once `maxBytes` is passed: every
 * value takes at least a byte, so it reads at most `maxBytes` values (an array of 3,000,000 numbers is refused
 * after ~2,000 of them), and never serialises the object.
 */
export function exceededLimit(object: JsonObject, limits: JsonLimits): string | undefined {
  const tooLarge = `At most ${limits.maxBytes} bytes serialised (UTF-8)`;
  let bytes = 0;
  return walkJson<string>(object, limits.maxBytes + 1, tooLarge, ({ value, depth, key, index }) => {
    if (depth === 2 && index >= limits.maxKeys) return `At most ${limits.maxKeys} keys`;
    if (index > 0) bytes += 1; // ,
    if (key !== undefined) bytes += textBytes(key, limits.maxBytes - bytes) + 1; // "key":
    if (typeof value === 'object' && value !== null) {
      if (depth > limits.maxDepth) return `At most ${limits.maxDepth} levels of nesting`;
      bytes += 2; // {} or []
    } else {
      bytes += textBytes(value, limits.maxBytes - bytes);
    }
    return bytes > limits.maxBytes ? tooLarge : undefined;
  });
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

/** A value met on a walk, and where it sits. */
interface Visited {
  value: unknown;
  /** The walked value is level 1. */
  depth: number;
  /** Its key in its object; `undefined` in an array, and for the walked value itself. */
  key: string | undefined;
  /** Its place among its parent's keys or elements. */
  index: number;
  /** The key of the walked object's own field it sits in (`undefined` if the walked value is not an object). */
  field: string | undefined;
}

/** An array or object whose children are being read, one at a time. */
interface Open {
  value: object;
  /** An object's own keys, listed when the walk reaches it; `undefined` for an array, read by index. */
  keys: readonly string[] | undefined;
  length: number;
  next: number;
  depth: number;
  field: string | undefined;
}

const isContainer = (value: unknown): value is object => typeof value === 'object' && value !== null;

function open(value: object, depth: number, field: string | undefined): Open {
  const keys = Array.isArray(value) ? undefined : Object.keys(value);
  return { value, keys, length: keys?.length ?? (value as unknown[]).length, next: 0, depth, field };
}

/**
 * Visits `root` and everything in it, depth first in document order, without recursion, and answers what
 * `visit` answers first, or `overBudget` once more than `maxValues` values would be read. An array's elements
 * are read by index (its indexes are never listed); an object's keys are listed when the walk reaches it. Only
 * the arrays and objects on the current path are held, so memory grows with depth (which `visit` bounds by
 * refusing), not with size.
 */
function walkJson<R>(root: unknown, maxValues: number, overBudget: R, visit: (visited: Visited) => R | undefined): R | undefined {
  const first = visit({ value: root, depth: 1, key: undefined, index: 0, field: undefined });
  if (first !== undefined || !isContainer(root)) return first;
  const rootIsObject = !Array.isArray(root);
  const path: Open[] = [open(root, 1, undefined)];
  let read = 1;
  for (let parent = path.at(-1); parent !== undefined; parent = path.at(-1)) {
    if (parent.next === parent.length) {
      path.pop();
      continue;
    }
    if (++read > maxValues) return overBudget;
    const index = parent.next++;
    const key = parent.keys?.[index];
    const value: unknown = key === undefined ? (parent.value as unknown[])[index] : (parent.value as JsonObject)[key];
    const depth = parent.depth + 1;
    const field = parent.depth === 1 ? (rootIsObject ? key : undefined) : parent.field;
    const answer = visit({ value, depth, key, index, field });
    if (answer !== undefined) return answer;
    if (isContainer(value)) path.push(open(value, depth, field));
  }
  return undefined;
}
