/**
 * The per-partner rate limit's counters (decisions.md §3, §11): a fixed one-minute window, counted in DynamoDB so it
 * holds across every instance. One counter item takes every request of its partner, and an item is one partition:
 * past a few hundred writes a second it throttles. So a partner allowed more than {@link REQUESTS_PER_COUNTER} a
 * minute has its window split into counters enough to keep each under that: a request counts on one of them, at
 * random, and is refused once that counter passes its share of the limit.
 *
 * A partner with the default limit (600) or any up to 15,000 a minute has one counter and the exact limit, as before.
 * Above that the limit is met on average: the counters fill evenly, but one may reach its share a little before the
 * others (at 180,000 a minute over 12 counters, a refusal comes at about 99 % of the limit, never later than 100 %).
 */

/** Requests a minute one counter takes at most: 250 a second, half of what a DynamoDB partition takes, halved again. */
export const REQUESTS_PER_COUNTER = 15_000;

export interface RateWindow {
  /** Counters the window is split into. */
  counters: number;
  /** The requests one counter allows in a window: the limit's share, rounded up. */
  perCounter: number;
}

export function rateWindowOf(limitPerMinute: number): RateWindow {
  const counters = Math.max(1, Math.ceil(limitPerMinute / REQUESTS_PER_COUNTER));
  return { counters, perCounter: Math.ceil(limitPerMinute / counters) };
}
