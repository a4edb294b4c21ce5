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
