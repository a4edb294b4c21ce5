/** zod pieces several routes share. */
import * as z from 'zod';
import { decimalPlaces } from '../domain/money';

/**
 * `limit` (1-200, default 50) and `cursor` of every list (decisions.md §9). `limit` is decimal digits only: what
 * `Number()` would also read (`0x10`, `  5`, `1e2`, `+5`) is refused, not guessed at.
 */
export const PageQuery = z.object({
  limit: z
    .string()
    .regex(/^[0-9]{1,3}$/, 'Must be a whole number from 1 to 200, in decimal digits')
    .transform(Number)
    .pipe(z.number().min(1).max(200))
    .default(50)
    .meta({ description: 'Items per page: a whole number from 1 to 200, in decimal digits; default 50', example: '20' }),
  cursor: z
    .string()
    .min(1)
    .max(2048)
    .optional()
    .meta({ description: "The previous page's `next_cursor`, unchanged, with the same filters (opaque and sealed: any other value is 400 VALIDATION_ERROR); absent: the first page" }),
});

/** Whitespace (as `String.prototype.trim` sees it) at the start or the end. */
const EDGE_WHITESPACE = /^\s|\s$/;
const NO_EDGE_WHITESPACE = 'Must not start or end with whitespace';

/**
 * What no identifier holds: the key separator `#`, controls (`\p{Cc}`), invisible format characters (`\p{Cf}`:
 * zero-width space and joiners, bidi controls, the BOM, soft hyphen), line and paragraph separators: anything that
 * would make two identifiers that look the same differ.
 */
const NOT_IN_IDENTIFIER = /[#\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

/**
 * Identifiers that end up inside table keys (`client_id`): visible characters only, never `#`, and no whitespace
 * at either end, so an identifier that looks like another is that other one. Refused, never trimmed.
 */
export const identifier = (min: number, max: number) =>
  z
    .string()
    .min(min)
    .max(max)
    .refine((value) => !NOT_IN_IDENTIFIER.test(value), 'Must not contain "#", control, invisible formatting (zero-width, bidi) or line separator characters')
    .refine((value) => !EDGE_WHITESPACE.test(value), NO_EDGE_WHITESPACE);

/** A merchant's `client_id` (3-128 characters), wherever a body or query carries one. */
export const clientIdentifier = identifier(3, 128);

/**
 * What no free text holds: controls (`\p{Cc}`: NUL, tab, newline, C1), line and paragraph separators, and the
 * bidi controls (U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069), which reorder how the text around them is
 * shown (`invoice\u202Efdp.exe` displays as `invoiceexe.pdf`). Joiners stay allowed: scripts and emoji use them.
 */
const NOT_IN_TEXT = /[\p{Cc}\p{Zl}\p{Zp}\p{Bidi_Control}]/u;

/**
 * Free text that people read (names, `legal_name`, `partner_reference`): any script, but none of
 * {@link NOT_IN_TEXT}, and no whitespace at either end. Refused, never trimmed, so what is stored is what was sent.
 */
export const text = (min: number, max: number) =>
  z
    .string()
    .min(min)
    .max(max)
    .refine((value) => !NOT_IN_TEXT.test(value), 'Must not contain control characters, line separators or bidi controls (U+202A-U+202E, U+2066-U+2069)')
    .refine((value) => !EDGE_WHITESPACE.test(value), NO_EDGE_WHITESPACE);

/** At most `decimals` decimal places, decided exactly on the number's decimal form (see `lib/domain/money`). */
export const maxDecimals = (decimals: number) => (value: number) => Number.isFinite(value) && decimalPlaces(value) <= decimals;

/** Percentages are given as numbers 0-100 with at most 4 decimals (e.g. 2.5 means 2.5 %). */
export const percentage = z.number().min(0).max(100).refine(maxDecimals(4), 'At most 4 decimal places');

/** `YYYY-MM-DD`, or that with `THH:MM:SS`, an optional fraction, and `Z` or an offset `±HH:MM` (RFC 3339). */
const ISO_8601 =
  /^(?<year>\d{4})-(?<month>\d{2})-(?<day>\d{2})(?:T(?<hour>\d{2}):(?<minute>\d{2}):(?<second>\d{2})(?:\.(?<fraction>\d{1,9}))?(?:Z|(?<sign>[+-])(?<offsetHours>\d{2}):(?<offsetMinutes>\d{2})))?$/;

const FIRST_INSTANT = Date.parse('0000-01-01T00:00:00.000Z');
const LAST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

const isLeapYear = (year: number) => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
const daysInMonth = (year: number, month: number) => (month === 2 && isLeapYear(year) ? 29 : (DAYS_IN_MONTH[month - 1] ?? 0));

/**
 * An ISO 8601 date (its 00:00 UTC) or date-time as the stored `toISOString()` form, or `undefined`. Strict where
 * `Date.parse` is lenient: `2026-02-30` is not 2 March, `2026-01-01 junk` is not 1 January, and nothing outside
 * years 0000-9999 (once the offset is applied) is taken, since stored instants compare as text. A fraction finer
 * than milliseconds is cut to milliseconds.
 */
export function parseInstant(text: string): string | undefined {
  const parts = ISO_8601.exec(text)?.groups;
  if (parts === undefined) return undefined;
  const part = (name: string) => Number(parts[name] ?? 0);
  const [year, month, day, hour, minute, second] = [part('year'), part('month'), part('day'), part('hour'), part('minute'), part('second')];
  const [offsetHours, offsetMinutes] = [part('offsetHours'), part('offsetMinutes')];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) return undefined;
  const local = new Date(0);
  local.setUTCFullYear(year, month - 1, day); // not Date.UTC, which reads years 0-99 as 1900-1999
  local.setUTCHours(hour, minute, second, Number((parts.fraction ?? '').slice(0, 3).padEnd(3, '0')));
  const offsetMs = (parts.sign === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  const instant = local.getTime() - offsetMs;
  return instant < FIRST_INSTANT || instant > LAST_INSTANT ? undefined : new Date(instant).toISOString();
}

/** A query parameter holding an instant ({@link parseInstant}), normalised so key ranges compare right. */
export const instant = z.string().transform((value, ctx) => {
  const parsed = parseInstant(value);
  if (parsed === undefined) {
    ctx.addIssue({ code: 'custom', message: 'Must be an ISO 8601 date (YYYY-MM-DD) or date-time with Z or an offset, in years 0000-9999' });
    return z.NEVER;
  }
  return parsed;
});
