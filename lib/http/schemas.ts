/** zod pieces several routes share. */
import { z } from 'zod';
import { decimalPlaces } from '../domain/money';

/** `limit` (1-200, default 50) and `cursor` of every list (decisions.md §9). */
export const PageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().min(1).max(2048).optional(),
});

/** Identifiers that end up inside table keys: printable, and never the key separator `#`. */
export const identifier = (min: number, max: number) =>
  z
    .string()
    .min(min)
    .max(max)
    .regex(/^[^#\s\p{Cc}][^#\p{Cc}]*$/u, 'Must not contain "#", control characters or leading whitespace');

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
