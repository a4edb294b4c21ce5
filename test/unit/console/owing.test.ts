/**
 * How long a merchant has owed, as the console's Balances shows it (`console/src/settlements/owing.ts`): whole days
 * since the balance's `owing_since`, and the "Owing > 7 days" mark for more than 7 × 24 hours, the rule the
 * service's `MerchantsOwingOver7Days` alarm counts (decisions.md §5a). A reversal 8 days old cannot be written
 * through the API (its ledger entry is written now), so the mark is checked here; the browser test checks the column.
 */
import { describe, expect, it } from '@jest/globals';
import { daysText, OWING_ALERT_DAYS, owingAge } from '../../../console/src/settlements/owing';

const NOW = new Date('2026-11-27T12:00:00.000Z');
const HOUR_MS = 60 * 60 * 1000;
/** `owing_since` as the API answers it, `hours` before NOW. */
const hoursAgo = (hours: number) => new Date(NOW.getTime() - hours * HOUR_MS).toISOString();

describe("a merchant's owing age in the console", () => {
  it('is nothing while the merchant owes nothing (owing_since null)', () => {
    expect(owingAge(null, NOW)).toBeNull();
  });

  it('counts whole days since owing_since', () => {
    expect([0, 23, 24, 47, 48, 24 * 9 + 5].map((hours) => owingAge(hoursAgo(hours), NOW))).toEqual([
      { days: 0, text: 'less than a day', overdue: false },
      { days: 0, text: 'less than a day', overdue: false },
      { days: 1, text: '1 day', overdue: false },
      { days: 1, text: '1 day', overdue: false },
      { days: 2, text: '2 days', overdue: false },
      { days: 9, text: '9 days', overdue: true },
    ]);
  });

  it('marks a merchant owing for more than 7 days, not one owing for exactly 7', () => {
    const at = (ms: number) => owingAge(new Date(NOW.getTime() - ms).toISOString(), NOW)?.overdue;
    const sevenDays = OWING_ALERT_DAYS * 24 * HOUR_MS;
    expect({ sixDays: at(6 * 24 * HOUR_MS), exactlySeven: at(sevenDays), justOver: at(sevenDays + 1), eightDays: at(8 * 24 * HOUR_MS) }).toEqual({
      sixDays: false,
      exactlySeven: false,
      justOver: true,
      eightDays: true,
    });
    expect(OWING_ALERT_DAYS).toBe(7);
  });

  it('shows a time a little ahead of the browser clock as less than a day, not a negative age', () => {
    expect(owingAge(new Date(NOW.getTime() + 5_000).toISOString(), NOW)).toEqual({ days: 0, text: 'less than a day', overdue: false });
    expect(daysText(0)).toBe('less than a day');
  });
});
