/**
 * What JSON.parse changes without a word, found in the text it parsed:
 * - a number whose literal is not the double it becomes: `12345678901234567890` is read as 12345678901234567000,
 *   `1.000000000000000000001` as 1, `1e309` as Infinity (which JSON.stringify then writes as `null`);
 * - a key given twice in one object: JSON.parse keeps the last value and drops the others.
 * `meta` is kept exactly as sent and an amount is charged as sent, so either would silently differ from what the
 * partner wrote: both are refused instead.
 *
 * Done by one scan of the text, not by a JSON.parse reviver (which receives each number's literal in Node 22):
 * the reviver recurses (a body nested 10,000 levels deep, which 32 KB can hold, overflows the stack), makes the
 * parse many times slower, and never sees a duplicate key.
 */
import type { JsonFault } from './json-limits';

/** A JSON string, from its opening quote; sticky, so it matches only where the scan stands. */
const STRING = /"[^"\\]*(?:\\[^][^"\\]*)*"/y;

/** A JSON number literal (the text is valid JSON already: this only finds where it ends). */
const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** The sign, digits, fraction and exponent of a decimal literal, as JSON or `String(number)` writes it. */
const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

const QUOTE = 0x22;
const MINUS = 0x2d;
const COMMA = 0x2c;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

/** An object or array the scan is inside; `keys` are an object's keys so far (`undefined` for an array). */
interface Open {
  keys: Set<string> | undefined;
  expectsKey: boolean;
}

/**
 * The first number or key in `text` (valid JSON, nested at most as deep as `findJsonFault` allows) that JSON.parse
 * would change, as a fault on the top-level field it sits in (`undefined`: the body is not an object, or the
 * key is one of its own), or `undefined`. Linear in the text's length; holds only the objects on the current path.
 */
export function findLiteralFault(text: string): JsonFault | undefined {
  const path: Open[] = [];
  let rootIsObject = false;
  let field: string | undefined;
  for (let at = 0; at < text.length; ) {
    const char = text.charCodeAt(at);
    if (char === QUOTE) {
      STRING.lastIndex = at;
      if (!STRING.test(text)) throw new Error('findLiteralFault() needs valid JSON');
      const open = path.at(-1);
      if (open?.keys !== undefined && open.expectsKey) {
        const key = keyOf(text.slice(at, STRING.lastIndex));
        if (open.keys.has(key)) return { field: path.length === 1 ? key : field, message: `The key ${shown(JSON.stringify(key))} is given more than once in one object` };
        open.keys.add(key);
        open.expectsKey = false;
        if (path.length === 1) field = key;
      }
      at = STRING.lastIndex;
    } else if (char === MINUS || (char >= DIGIT_0 && char <= DIGIT_9)) {
      NUMBER.lastIndex = at;
      if (!NUMBER.test(text)) throw new Error('findLiteralFault() needs valid JSON');
      const literal = text.slice(at, NUMBER.lastIndex);
      const readAs = inexactReading(literal);
      if (readAs !== undefined) {
        return {
          field: rootIsObject && path.length > 0 ? field : undefined,
          message: `The number ${shown(literal)} cannot be kept exactly: it would be read as ${readAs} (send it with fewer digits; a value in \`meta\` may be sent as a string instead)`,
        };
      }
      at = NUMBER.lastIndex;
    } else {
      if (char === 0x7b /* { */) {
        if (path.length === 0) rootIsObject = true;
        path.push({ keys: new Set(), expectsKey: true });
      } else if (char === 0x5b /* [ */) {
        path.push({ keys: undefined, expectsKey: false });
      } else if (char === 0x7d /* } */ || char === 0x5d /* ] */) {
        path.pop();
      } else if (char === COMMA) {
        const open = path.at(-1);
        if (open?.keys !== undefined) open.expectsKey = true;
      }
      at++;
    }
  }
  return undefined;
}

/** A key literal's value: its text between the quotes, unless escapes make JSON.parse needed. */
const keyOf = (literal: string): string => (literal.includes('\\') ? (JSON.parse(literal) as string) : literal.slice(1, -1));

/** At most 40 characters of a literal, for a message. */
const shown = (literal: string) => (literal.length <= 40 ? literal : `${literal.slice(0, 40)}…`);

/**
 * What a number literal is read as (`String(value)`), when that is not the number written, else `undefined`.
 * Written and read are compared as decimals, so `1.10`, `1e2` and `-0` are exact. A literal of at most 15
 * characters and no exponent has at most 15 significant digits within a double's normal range, which a double
 * always keeps: most literals are decided without converting anything.
 */
function inexactReading(literal: string): string | undefined {
  if (literal.length <= 15 && !literal.includes('e') && !literal.includes('E')) return undefined;
  const value = Number(literal);
  const readAs = String(value);
  if (!Number.isFinite(value)) return readAs;
  return readAs === literal || decimalOf(readAs) === decimalOf(literal) ? undefined : readAs;
}

/** A decimal literal normalised: `-` if negative, its significant digits, and the exponent of the last (`"0"` for zero). */
function decimalOf(literal: string): string {
  const [, sign = '', whole = '', fraction = '', exponent = '0'] = DECIMAL.exec(literal) ?? [];
  const digits = `${whole}${fraction}`;
  const first = digits.search(/[1-9]/);
  if (first === -1) return '0';
  const significant = digits.slice(first).replace(/0+$/, '');
  const last = Number(exponent) - fraction.length + (digits.length - first - significant.length);
  return `${sign}${significant}e${last}`;
}
