/**
 * How long a merchant has owed money, from the balance resource's `owing_since` (when its oldest waiting reversal
 * was written; null while it owes nothing). decisions.md §5a: a merchant owing for more than 7 days shows in the
 * console — the same rule the service's `MerchantsOwingOver7Days` alarm counts (more than 7 × 24 hours).
 */
import type { Balance } from '../api-types';

/** Owing for more than this many days marks the merchant (the service alarms on the same). */
export const OWING_ALERT_DAYS = 7;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface OwingAge {
  /** Whole days since `owing_since` (0 within the first 24 hours). */
  days: number;
  /** "less than a day", "1 day", "9 days". */
  text: string;
  /** Owing for more than {@link OWING_ALERT_DAYS} days. */
  overdue: boolean;
}

export const daysText = (days: number) => (days < 1 ? 'less than a day' : days === 1 ? '1 day' : `${days} days`);

/** How long the merchant has owed at `now`; null when it owes nothing (`owing_since` null). */
export function owingAge(owingSince: Balance['owing_since'], now: Date): OwingAge | null {
  if (owingSince === null) return null;
  const elapsed = Math.max(0, now.getTime() - Date.parse(owingSince));
  const days = Math.floor(elapsed / DAY_MS);
  return { days, text: daysText(days), overdue: elapsed > OWING_ALERT_DAYS * DAY_MS };
}
