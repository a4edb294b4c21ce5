/**
 * The per-partner rate limit's counters (decisions.md §3, §11): a fixed one-minute window, counted in DynamoDB so it
 * holds across every instance. One counter item takes every request of its partner, and an item is one partition:
 * past a few hundred writes a second it throttles. So a partner allowed more than {@link REQUESTS_PER_COUNTER} a
 * minute has its window split into counters enough to keep each under that: a request counts on one of them, at
 * random, and is refused once that counter passes its share of the limit.
 *
 * A partner with the default limit (600) or any up to 15,000 a minute has one counter and the exact limit, as before.
 * Above that the counters' shares add up to the limit exactly, so it is never exceeded; but one counter may reach its
 * share a little before the others (at 180,000 a minute over 12 counters, the first refusal comes within the last few
 * hundred requests of the window's limit).
 */

/** Requests a minute one counter takes at most: 250 a second, half of what a DynamoDB partition takes, halved again. */
export const REQUESTS_PER_COUNTER = 15_000;

export interface RateWindow {
  /** Counters the window is split into. */
  counters: number;
  /** The requests counter `counter` allows in a window: the limit shared out, the first `limit % counters` one more. */
  shareOf(counter: number): number;
}

export function rateWindowOf(limitPerMinute: number): RateWindow {
  const counters = Math.max(1, Math.ceil(limitPerMinute / REQUESTS_PER_COUNTER));
  const base = Math.floor(limitPerMinute / counters);
  const remainder = limitPerMinute % counters;
  return { counters, shareOf: (counter) => base + (counter < remainder ? 1 : 0) };
}
