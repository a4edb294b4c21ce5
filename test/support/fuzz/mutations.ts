/**
 * Near-valid bodies for the fuzz suites: a valid body with one thing changed (a wrong type, a field
 * removed or added, an odd or rule-breaking string, an odd number literal, a value the route's own rules turn on,
 * deep nesting, a key given twice, a raw edit, bytes that are not UTF-8), rendered to the exact bytes sent, with
 * what docs/conventions.md says the service must answer: `accept`, `invalid` (400 VALIDATION_ERROR, or 413
 * PAYLOAD_TOO_LARGE past 32 KB) or `either` where the docs leave it to the route's own rules.
 *
 * A plan is plain data drawn without the base body (which holds fresh, per-run identifiers), so fast-check can
 * shrink it; `render` applies it to a base body at run time.
 */
import fc from 'fast-check';
import { containerOf, jsonValue, loneSurrogate, NASTY_CHARACTERS, oddString, serialize, withKey, withoutKey, withRawLiteral, type Json, type JsonObject } from './json';

/** Refused in free text (`text`): controls, line/paragraph separators, bidi controls. */
const TEXT_POISON = ['\u0000', '\u0007', '\t', '\n', '\r', '\u001f', '\u007f', '\u0085', '\u2028', '\u2029', '\u061c', '\u200e', '\u202a', '\u202e', '\u2066', '\u2069'];
/** Refused in identifiers besides the above: `#` and invisible format characters (\p{Cf}). */
const IDENTIFIER_POISON = [...TEXT_POISON, '#', '\u200b', '\u200d', '\u00ad', '\ufeff', '\u2060'];
/** What `\s` matches at either end of a value (refused, never trimmed). */
const EDGE_SPACES = [' ', '\t', '\u00a0', '\u2003', '\u3000', '\ufeff', '\n'];

export type FieldType = 'string' | 'number' | 'object' | 'array' | 'boolean';

/** A JSON value of another type than `type` (null excluded when the field takes null). */
export const isOfType = (value: Json, type: FieldType): boolean => {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
  }
};

export interface FieldSpec {
  name: string;
  type: FieldType;
  required: boolean;
  nullable?: boolean;
  /** `identifier` (client_id), `text` (names, references), `plain` (anything else: only length and surrogates). */
  rules?: 'identifier' | 'text' | 'plain';
  /** Documented length bounds (code points) of a string field. */
  minLength?: number;
  maxLength?: number;
  /** Documented bounds of a number field (`above`: exclusive lower bound). */
  min?: number;
  above?: number;
  max?: number;
  /**
   * Values that matter to the route's own rules (the edges of a fee, a suspended client, another partner's id, an
   * intent of the wrong amount ...), read at render time: the `example` mutation sets the field to one of them.
   */
  examples?: () => readonly Json[];
}

export type StringVariant =
  | { kind: 'empty' }
  | { kind: 'long'; length: number; unit: string }
  | { kind: 'lone-surrogate'; at: number; unit: string }
  | { kind: 'poison'; at: number; pick: number }
  | { kind: 'edge-space'; side: 'start' | 'end'; space: string }
  | { kind: 'odd'; value: string };

export type RawEdit =
  | { kind: 'truncate'; at: number }
  | { kind: 'suffix'; garbage: string }
  | { kind: 'bom' }
  | { kind: 'trailing-comma' }
  | { kind: 'single-quotes' }
  | { kind: 'comment' };

export type Layout = 'compact' | 'pretty' | 'escaped' | 'reordered' | 'padded';

export type Plan =
  | { kind: 'as-is'; layout: Layout; escapeEvery: number }
  | { kind: 'wrong-type'; pick: number; value: Json }
  | { kind: 'remove'; pick: number }
  | { kind: 'extra'; key: string; value: Json }
  | { kind: 'string'; pick: number; variant: StringVariant }
  | { kind: 'number'; pick: number; literal: string }
  | { kind: 'example'; pick: number; example: number }
  | { kind: 'nested'; pick: number; depth: number; container: 'array' | 'object' }
  | { kind: 'duplicate'; pick: number; value: Json; twice: 'same' | 'other' }
  | { kind: 'raw'; edit: RawEdit }
  | { kind: 'bad-utf8'; pick: number; at: number; bytes: number[] };

/** Literals JSON does not have: malformed JSON. */
export const NOT_JSON_NUMBERS = ['NaN', '-NaN', 'Infinity', '-Infinity', '+1', '.5', '01', '-01', '0x10', '1.', '1e', '--1', '1_000', '\u0661', 'undefined'];
/** Literals JSON.parse would read as another number (decisions: a VALIDATION_ERROR). */
export const INEXACT_NUMBERS = ['1e309', '-1e309', '1e400', '12345678901234567890', '1.000000000000000000001', '1e-400', '-1e-400', '0.30000000000000000001', '9007199254740993'];
/** Exact but odd literals: `-0`, exponents, trailing zeros, range edges. */
export const ODD_EXACT_NUMBERS = [
  '-0', '0', '0.0', '-0.0', '0e0', '1e2', '1E+2', '1.10', '-1', '100', '100.0001', '1e-7', '5e-324', '1.7976931348623157e308', '99999999',
  '100000000', '999999.99', '999999.999', '0.001', '0.005', '12.345', '10.001', '10', '10.01', '1000001', '0.00001', '1.5', '2.9', '1.23456',
];

const numberLiteral = fc.oneof(
  fc.constantFrom(...NOT_JSON_NUMBERS),
  fc.constantFrom(...INEXACT_NUMBERS),
  { weight: 2, arbitrary: fc.constantFrom(...ODD_EXACT_NUMBERS) },
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((value) => JSON.stringify(value)),
  fc.integer().map(String),
  fc.bigInt({ min: -(10n ** 25n), max: 10n ** 25n }).map(String),
);

const stringVariant: fc.Arbitrary<StringVariant> = fc.oneof(
  fc.constant({ kind: 'empty' as const }),
  fc.record({ kind: fc.constant('long' as const), length: fc.oneof(fc.integer({ min: 100, max: 600 }), fc.integer({ min: 5_000, max: 40_000 })), unit: fc.constantFrom('x', '\u00e9', '\u{1f600}', ' ') }),
  fc.record({ kind: fc.constant('lone-surrogate' as const), at: fc.nat(), unit: loneSurrogate }),
  fc.record({ kind: fc.constant('poison' as const), at: fc.nat(), pick: fc.nat() }),
  fc.record({ kind: fc.constant('edge-space' as const), side: fc.constantFrom('start' as const, 'end' as const), space: fc.constantFrom(...EDGE_SPACES) }),
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('odd' as const), value: oddString(30) }) },
);

const rawEdit: fc.Arbitrary<RawEdit> = fc.oneof(
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('suffix' as const), garbage: oddString(8).filter((text) => /[^ \t\n\r]/.test(text)) }),
  fc.constant({ kind: 'bom' as const }),
  fc.constant({ kind: 'trailing-comma' as const }),
  fc.constant({ kind: 'single-quotes' as const }),
  fc.constant({ kind: 'comment' as const }),
);

/** Byte sequences that are not UTF-8: a Latin-1 byte, an overlong form, an encoded surrogate, past U+10FFFF ... */
export const NOT_UTF8 = [[0xff], [0xe9], [0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82]];

/** One near-valid mutation; `as-is` (several layouts of the valid body itself) about one time in six. */
export const plan: fc.Arbitrary<Plan> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('as-is' as const), layout: fc.constantFrom<Layout>('compact', 'pretty', 'escaped', 'reordered', 'padded'), escapeEvery: fc.integer({ min: 1, max: 5 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('wrong-type' as const), pick: fc.nat(), value: jsonValue }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('extra' as const), key: fc.oneof(oddString(12), fc.constantFrom('__proto__', 'constructor', 'partner_fee_percentge', 'Amount', 'client_id ')), value: jsonValue }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('string' as const), pick: fc.nat(), variant: stringVariant }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('number' as const), pick: fc.nat(), literal: numberLiteral }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('example' as const), pick: fc.nat(), example: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('nested' as const), pick: fc.nat(), depth: fc.oneof(fc.integer({ min: 1, max: 70 }), fc.integer({ min: 70, max: 3000 })), container: fc.constantFrom('array' as const, 'object' as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('duplicate' as const), pick: fc.nat(), value: jsonValue, twice: fc.constantFrom('same' as const, 'other' as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('raw' as const), edit: rawEdit }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('bad-utf8' as const), pick: fc.nat(), at: fc.nat(), bytes: fc.constantFrom(...NOT_UTF8) }) },
);

/** What the service must answer: a 2xx, a 400 VALIDATION_ERROR (or 413 for a body past 32 KB), or either. */
export type Expectation = 'accept' | 'invalid' | 'either';

export interface Rendered {
  bytes: Buffer;
  expect: Expectation;
  /** Why, for the failure message. */
  why: string;
}

const codePoints = (text: string) => Array.from(text).length;

/** Whether `value` breaks a rule docs/conventions.md states for the field (so it must be refused). */
export function breaksStringRules(field: FieldSpec, value: string): string | undefined {
  if (/\p{Cs}/u.test(value)) return 'lone surrogate';
  if (field.minLength !== undefined && codePoints(value) < field.minLength) return `shorter than ${field.minLength}`;
  if (field.maxLength !== undefined && codePoints(value) > field.maxLength) return `longer than ${field.maxLength}`;
  if (field.rules === 'text' || field.rules === 'identifier') {
    if (/^\s|\s$/.test(value)) return 'whitespace at an end';
    if (/[\p{Cc}\p{Zl}\p{Zp}\p{Bidi_Control}]/u.test(value)) return 'control, separator or bidi character';
  }
  if (field.rules === 'identifier' && /[#\p{Cf}]/u.test(value)) return '"#" or a format character in an identifier';
  return undefined;
}

/** Whether a number literal must be refused for `field`: not JSON, not exact, or outside the documented range. */
function breaksNumberRules(field: FieldSpec, literal: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(literal);
  } catch {
    return 'not a JSON number';
  }
  if (typeof value !== 'number') return 'not a number';
  if (!Number.isFinite(value) || INEXACT_NUMBERS.includes(literal)) return 'not exactly a double';
  if (field.above !== undefined && !(value > field.above)) return `not above ${field.above}`;
  if (field.min !== undefined && value < field.min) return `below ${field.min}`;
  if (field.max !== undefined && value > field.max) return `above ${field.max}`;
  return undefined;
}

const pickOf = <T>(items: readonly T[], pick: number): T | undefined => (items.length === 0 ? undefined : items[pick % items.length]);

/** Applies `plan` to the valid `base` body of a route whose fields are `fields`. */
export function render(plan: Plan, fields: readonly FieldSpec[], base: JsonObject): Rendered {
  const text = (body: string, expect: Expectation, why: string): Rendered => ({ bytes: Buffer.from(body, 'utf8'), expect, why });
  const compact = serialize(base);
  const asIs = text(compact, 'accept', 'the valid body');
  switch (plan.kind) {
    case 'as-is': {
      if (plan.layout === 'pretty') return text(serialize(base, { indent: 2 }), 'accept', 'the valid body, pretty-printed');
      if (plan.layout === 'escaped') return text(serialize(base, { escape: (i) => i % plan.escapeEvery === 0 }), 'accept', 'the valid body with \\u escapes');
      if (plan.layout === 'padded') return text(` \n\t${compact}\r\n `, 'accept', 'the valid body padded with JSON whitespace');
      if (plan.layout === 'reordered') {
        const reversed: JsonObject = {};
        for (const key of Object.keys(base).reverse()) reversed[key] = base[key] as Json;
        return text(serialize(reversed), 'accept', 'the valid body, keys reversed');
      }
      return asIs;
    }
    case 'wrong-type': {
      const field = pickOf(fields, plan.pick);
      if (field === undefined) return asIs;
      const wrong = !isOfType(plan.value, field.type) && !(plan.value === null && field.nullable === true);
      return text(serialize(withKey(base, field.name, plan.value)), wrong ? 'invalid' : 'either', `${field.name} = ${serialize(plan.value).slice(0, 80)}`);
    }
    case 'remove': {
      const present = fields.filter((field) => Object.hasOwn(base, field.name));
      const field = pickOf(present, plan.pick);
      if (field === undefined) return asIs;
      return text(serialize(withoutKey(base, field.name)), field.required ? 'invalid' : 'accept', `without ${field.required ? 'required' : 'optional'} ${field.name}`);
    }
    case 'extra': {
      if (fields.some((field) => field.name === plan.key)) return asIs;
      return text(serialize(withKey(base, plan.key, plan.value)), 'invalid', `unknown field ${JSON.stringify(plan.key)}`);
    }
    case 'string': {
      const field = pickOf(fields.filter((f) => f.type === 'string'), plan.pick);
      if (field === undefined) return asIs;
      const current = typeof base[field.name] === 'string' ? (base[field.name] as string) : 'abc';
      const value = mutateString(current, field, plan.variant);
      const broken = breaksStringRules(field, value);
      const body = serialize(withKey(base, field.name, value));
      return text(body, broken === undefined ? 'either' : 'invalid', `${field.name} = ${JSON.stringify(value).slice(0, 80)}${broken === undefined ? '' : ` (${broken})`}`);
    }
    case 'number': {
      const field = pickOf(fields.filter((f) => f.type === 'number'), plan.pick);
      if (field === undefined) return asIs;
      const broken = breaksNumberRules(field, plan.literal);
      return text(withRawLiteral(base, field.name, plan.literal), broken === undefined ? 'either' : 'invalid', `${field.name} = ${plan.literal}${broken === undefined ? '' : ` (${broken})`}`);
    }
    case 'example': {
      const field = pickOf(fields.filter((f) => f.examples !== undefined && f.examples().length > 0), plan.pick);
      const value = field === undefined ? undefined : pickOf(field.examples?.() ?? [], plan.example);
      if (field === undefined || value === undefined) return asIs;
      const broken = typeof value === 'string' && field.type === 'string' ? breaksStringRules(field, value) : typeof value === 'number' && field.type === 'number' ? breaksNumberRules(field, JSON.stringify(value)) : undefined;
      return text(serialize(withKey(base, field.name, value)), broken === undefined ? 'either' : 'invalid', `${field.name} = ${serialize(value).slice(0, 80)}${broken === undefined ? '' : ` (${broken})`}`);
    }
    case 'nested': {
      const field = pickOf(fields, plan.pick);
      if (field === undefined) return asIs;
      // A container is the wrong type except for object/array fields, where the depth limits decide.
      const wrongType = !(field.type === 'array' && plan.container === 'array') && !(field.type === 'object' && plan.container === 'object');
      const tooDeep = plan.depth + 1 > 64; // the body is level 1
      return text(
        withRawLiteral(base, field.name, containerOf(plan.depth, plan.container)),
        wrongType || tooDeep ? 'invalid' : 'either',
        `${field.name} nested ${plan.depth} ${plan.container}s deep`,
      );
    }
    case 'duplicate': {
      const field = pickOf(fields.filter((f) => Object.hasOwn(base, f.name)), plan.pick);
      if (field === undefined) return asIs;
      const first = plan.twice === 'same' ? serialize(base[field.name] as Json) : serialize(plan.value);
      const body = compact.replace(/^\{/, `{${JSON.stringify(field.name)}:${first},`);
      return text(body, 'invalid', `${field.name} given twice (first ${first.slice(0, 60)})`);
    }
    case 'raw':
      return text(rawEdited(compact, plan.edit), 'invalid', `raw edit ${JSON.stringify(plan.edit)}`);
    case 'bad-utf8': {
      const field = pickOf(fields.filter((f) => f.type === 'string' && typeof base[f.name] === 'string'), plan.pick);
      if (field === undefined) return asIs;
      const marker = '\u0001FUZZ\u0001';
      const value = base[field.name] as string;
      const cut = plan.at % (value.length + 1);
      const body = serialize(withKey(base, field.name, `${value.slice(0, cut)}${marker}${value.slice(cut)}`));
      const [before, after] = body.split(JSON.stringify(marker).slice(1, -1));
      return { bytes: Buffer.concat([Buffer.from(before ?? '', 'utf8'), Buffer.from(plan.bytes), Buffer.from(after ?? '', 'utf8')]), expect: 'invalid', why: `bytes ${plan.bytes.map((b) => b.toString(16)).join(' ')} inside ${field.name}` };
    }
  }
}

function mutateString(current: string, field: FieldSpec, variant: StringVariant): string {
  switch (variant.kind) {
    case 'empty':
      return '';
    case 'long':
      return variant.unit.repeat(variant.length);
    case 'lone-surrogate': {
      const at = variant.at % (current.length + 1);
      // Never between the halves of a pair already there (that would make two lone ones, which is still fine).
      return `${current.slice(0, at)}${variant.unit}${current.slice(at)}`;
    }
    case 'poison': {
      const poison = field.rules === 'identifier' ? IDENTIFIER_POISON : field.rules === 'text' ? TEXT_POISON : NASTY_CHARACTERS;
      const char = poison[variant.pick % poison.length] ?? '#';
      const at = 1 + (variant.at % Math.max(1, current.length - 1));
      return `${current.slice(0, at)}${char}${current.slice(at)}`;
    }
    case 'edge-space':
      return variant.side === 'start' ? `${variant.space}${current}` : `${current}${variant.space}`;
    case 'odd':
      return variant.value;
  }
}

function rawEdited(compact: string, edit: RawEdit): string {
  switch (edit.kind) {
    case 'truncate':
      return compact.slice(0, edit.at % compact.length);
    case 'suffix':
      return `${compact}${edit.garbage}`;
    case 'bom':
      return `\ufeff${compact}`;
    case 'trailing-comma':
      return compact.replace(/\}$/, ',}');
    case 'single-quotes':
      return compact.replaceAll('"', "'");
    case 'comment':
      return `/* fuzz */${compact}`;
  }
}
