/**
 * JSON for the fuzz suites: odd strings (any code point, lone surrogates, the characters the field
 * rules single out), any JSON value, a serialiser that can write `\uXXXX` escapes and splice in raw literals, and
 * whole bodies that need no valid base (any JSON, keyed objects, deep nesting, bytes). The near-valid mutations
 * built on them are in `mutations.ts`.
 */
import fc from 'fast-check';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

// ---------------------------------------------------------------------------------------------------------------
// Strings and values

/** Characters the field rules of docs/conventions.md single out, and other classics. */
export const NASTY_CHARACTERS = [
  '#', '\u0000', '\u0007', '\t', '\n', '\r', '\u001f', '\u007f', '\u0085', '\u00a0', '\u00ad', '\u061c', '\u200b', '\u200d',
  '\u200e', '\u2028', '\u2029', '\u202a', '\u202e', '\u2066', '\u2069', '\ufeff', '\ufffd', '\uffff', '\u{1f600}',
  '\u{1f468}\u200d\u{1f469}\u200d\u{1f467}', 'e\u0301', '"', '\\', '/', "'", ' ', '\u3000', '\u{10ffff}', '\u{e0001}',
] as const;

export const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));

/** One unit of an odd string: any code point, a printable grapheme, a singled-out character, a lone surrogate. */
const oddUnit = fc.oneof(
  { weight: 5, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }) },
  { weight: 4, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_CHARACTERS) },
  { weight: 1, arbitrary: loneSurrogate },
);

export const oddString = (maxLength = 24) => fc.string({ unit: oddUnit, maxLength });

const edgeNumbers = [-0, 0, 1, -1, 0.1, 0.5, 1e21, 1e-7, 5e-324, 1e308, -1e308, 2 ** 53, 2 ** 53 + 2, 99_999_999, 100_000_000, 999_999.99, 0.001, 10.001];
export const jsonNumber = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(...edgeNumbers),
);

/** Any JSON value, with odd strings (keys too) and numbers; shallow enough to stay cheap. */
export const jsonValue: fc.Arbitrary<Json> = fc.letrec<{ value: Json; array: Json[]; object: JsonObject }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    jsonNumber,
    oddString(),
    tie('array'),
    tie('object'),
  ),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(fc.oneof(oddString(10), fc.constantFrom('__proto__', 'constructor', 'toString', 'amount', 'meta')), tie('value'), { maxKeys: 4 }),
})).value;

// ---------------------------------------------------------------------------------------------------------------
// Serialising: JSON text with optional `\uXXXX` escapes, raw literals spliced in

/** JSON text of `value`; `escape(i)` decides per string character whether to write it as `\uXXXX`. */
export function serialize(value: Json, options: { indent?: number; escape?: (index: number) => boolean } = {}): string {
  let counter = 0;
  const escape = options.escape;
  const str = (text: string): string => {
    if (escape === undefined) return JSON.stringify(text);
    let out = '"';
    for (const unit of text.split('')) {
      const code = unit.charCodeAt(0);
      if (escape(counter++) || code > 0x7e || code < 0x20 || unit === '"' || unit === '\\') out += `\\u${code.toString(16).padStart(4, '0')}`;
      else out += unit;
    }
    return `${out}"`;
  };
  const indent = options.indent ?? 0;
  const walk = (node: Json, depth: number): string => {
    const pad = indent > 0 ? `\n${' '.repeat(indent * (depth + 1))}` : '';
    const end = indent > 0 ? `\n${' '.repeat(indent * depth)}` : '';
    const colon = indent > 0 ? ': ' : ':';
    if (node === null || typeof node === 'boolean' || typeof node === 'number') return JSON.stringify(node);
    if (typeof node === 'string') return str(node);
    if (Array.isArray(node)) return node.length === 0 ? '[]' : `[${node.map((item) => pad + walk(item, depth + 1)).join(',')}${end}]`;
    const keys = Object.keys(node);
    return keys.length === 0 ? '{}' : `{${keys.map((key) => `${pad}${str(key)}${colon}${walk(node[key] as Json, depth + 1)}`).join(',')}${end}}`;
  };
  return walk(value, 0);
}

/** A placeholder string value that `splice` replaces by a raw literal in the JSON text. */
const RAW = '__FUZZ_RAW_LITERAL__';

/** The JSON text of `object` with `key` set to `literal`, written as is (`1e309`, `NaN`, `-0`, `[[[1]]]` ...). */
export const withRawLiteral = (object: JsonObject, key: string, literal: string) =>
  serialize(withKey(object, key, RAW)).replace(JSON.stringify(RAW), () => literal);

/** An object with `key` set (defined, so `__proto__` is an own key), keeping the other keys' order. */
export function withKey(object: JsonObject, key: string, value: Json): JsonObject {
  const copy: JsonObject = {};
  for (const k of Object.keys(object)) Object.defineProperty(copy, k, { value: object[k], enumerable: true, writable: true, configurable: true });
  Object.defineProperty(copy, key, { value, enumerable: true, writable: true, configurable: true });
  return copy;
}

export function withoutKey(object: JsonObject, key: string): JsonObject {
  const copy: JsonObject = {};
  for (const k of Object.keys(object)) if (k !== key) Object.defineProperty(copy, k, { value: object[k], enumerable: true, writable: true, configurable: true });
  return copy;
}

/** `depth` nested arrays or objects around a 1, as JSON text. */
export const containerOf = (depth: number, container: 'array' | 'object') =>
  container === 'array' ? `${'['.repeat(depth)}1${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

// ---------------------------------------------------------------------------------------------------------------
// Whole bodies that need no base: arbitrary JSON, deep nesting, bytes

/** Raw bodies for the "anything at all" property: JSON of any shape, keyed objects, deep nesting, bytes. */
export function arbitraryBody(fieldNames: readonly string[]): fc.Arbitrary<{ bytes: Buffer; what: string }> {
  const asText = (what: string) => (body: string) => ({ bytes: Buffer.from(body, 'utf8'), what });
  const keyed = fc
    .dictionary(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...fieldNames) }, oddString(10)), jsonValue, { maxKeys: fieldNames.length + 1 })
    .map((object) => serialize(object));
  return fc.oneof(
    { weight: 3, arbitrary: jsonValue.map((value) => serialize(value)).map(asText('json')) },
    { weight: 3, arbitrary: keyed.map(asText('keyed json')) },
    { weight: 1, arbitrary: fc.json({ maxDepth: 3 }).map(asText('fc.json')) },
    {
      weight: 1,
      arbitrary: fc
        .record({ depth: fc.integer({ min: 50, max: 5000 }), container: fc.constantFrom('array' as const, 'object' as const) })
        .map(({ depth, container }) => ({ bytes: Buffer.from(containerOf(depth, container)), what: `nested ${depth}` })),
    },
    { weight: 1, arbitrary: oddString(60).map(asText('text')) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 120 }).map((bytes) => ({ bytes: Buffer.from(bytes), what: 'bytes' })) },
    { weight: 1, arbitrary: fc.constantFrom('', ' ', 'null', '[]', '{}', '""', '0', '-0', '1e309', 'NaN', '{"a":1,"a":2}', '\ufeff{}').map(asText('classic')) },
  );
}

/** Bytes shown in a failure message: the text if it is UTF-8, else hex. */
export function showBytes(bytes: Buffer, max = 300): string {
  const text = bytes.toString('utf8');
  const shown = Buffer.from(text, 'utf8').equals(bytes) ? JSON.stringify(text) : `hex ${bytes.toString('hex')}`;
  return shown.length <= max ? shown : `${shown.slice(0, max)}… (${bytes.length} bytes)`;
}
