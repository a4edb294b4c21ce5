/**
 * The circuit breaker and bulkhead of one partner webhook endpoint (decisions.md §8: one endpoint's timeouts do not
 * hold the delivery consumer's capacity). Pure: the store keeps the state on the endpoint's item, the consumer asks
 * {@link admit} before an attempt and {@link afterAttempt} after it.
 *
 * How many attempts may be in flight to the endpoint ({@link capacityOf}):
 * - **closed** (it has answered, and has not timed out since), answering fast: any number, with no write;
 * - **slow** (closed, but its last answer took {@link SLOW_ANSWER_MS} or more): {@link SLOW_ENDPOINT_LEASES}, each
 *   under a lease, so an endpoint that answers just inside the timeout holds two consumer slots, not all of them;
 * - **probing** (a new endpoint, or one whose cool-down has passed): one, the probe, under a lease;
 * - **open** (a probe, or an attempt while closed, timed out): none until the cool-down ends; each probe that times
 *   out doubles it, up to 15 minutes.
 * A delivery that may not go now is **parked** (no attempt counted, no message on the queue): the consumer wakes
 * parked deliveries when the endpoint can take them (a lease given back, the breaker closed, a cool-down over). So
 * a dead endpoint costs the consumer one probe in flight and nothing per waiting delivery.
 *
 * A probe's answer in time (any HTTP status: a fast 500 costs the consumer nothing) closes the breaker, after
 * {@link PROBES_TO_CLOSE} in a row for an endpoint that has timed out; only timeouts open it.
 */

/** The breaker's state (epoch milliseconds; 0: not set). */
export interface BreakerState {
  /** The last answer in time to a probe, or to an attempt that changed the state (0: the endpoint has never answered). */
  answeredAt: number;
  /** Open until then; once past, probing until {@link probesToClose} probes in a row have answered (0: never timed out since closed). */
  openUntil: number;
  /** The last cool-down, doubled by the next probe that times out (0: none). */
  cooldownMs: number;
  /** Probes still to answer in a row before an endpoint that timed out is closed again. */
  probesToClose: number;
  /** The endpoint's last answer took {@link SLOW_ANSWER_MS} or more: its attempts go under leases, a few at a time. */
  slow: boolean;
  /** When the leases of the attempts running under one end (a probe, or an attempt to a slow endpoint). */
  leases: number[];
}

/** An endpoint's breaker as stored on its item, with the revision a write of it is conditional on. */
export interface StoredBreaker {
  state: BreakerState;
  revision: number;
}

/** A new endpoint: probed once, closed by its first answer. */
export const NEW_ENDPOINT_BREAKER: BreakerState = { answeredAt: 0, openUntil: 0, cooldownMs: 0, probesToClose: 0, slow: false, leases: [] };

/** An endpoint created before breakers were kept: it was being delivered to freely, so it starts closed. */
export const LEGACY_ENDPOINT_BREAKER: BreakerState = { ...NEW_ENDPOINT_BREAKER, answeredAt: 1 };

/** Probes that must answer in a row before an endpoint that timed out takes attempts freely again. */
export const PROBES_TO_CLOSE = 3;

/** An answer that took this long or more makes the endpoint slow. */
export const SLOW_ANSWER_MS = 1_000;

/** An answer faster than this makes a slow endpoint fast again (between the two, it stays as it is: no flapping writes). */
export const FAST_ANSWER_MS = 500;

/** Attempts in flight at once to a slow endpoint. */
export const SLOW_ENDPOINT_LEASES = 2;

/** The breaker's timings (tests shorten them with the sender's timeout). */
export interface BreakerSettings {
  /** The sender's timeout: an attempt's outcome is known by then (plus the lease's margin). */
  attemptTimeoutMs: number;
  /** The first cool-down after a timeout; each probe that times out doubles it. */
  firstCooldownMs: number;
  /** The longest cool-down (SQS's longest message delay: the message that wakes the endpoint carries it). */
  maxCooldownMs: number;
}

/** A lease runs this long past its attempt's timeout: only a consumer that stopped mid-attempt lets it run out. */
const LEASE_MARGIN_MS = 5_000;

export const breakerSettings = (attemptTimeoutMs: number): BreakerSettings => ({
  attemptTimeoutMs,
  firstCooldownMs: 5_000,
  maxCooldownMs: 900_000,
});

export type Admission =
  /** Closed and fast: attempt, no lease. */
  | { kind: 'attempt' }
  /** A lease is free: attempt under it, if this consumer wins it (`probe`: the breaker is not closed). */
  | { kind: 'lease'; probe: boolean }
  /** Park: `open` until `until`, or `busy` (every lease taken) until one is given back. */
  | { kind: 'park'; reason: 'open' | 'busy'; until: number };

export const isClosed = (state: BreakerState) => state.answeredAt > 0 && state.openUntil === 0;

/** The leases still running at `now` (a lease past its end belonged to a consumer that stopped). */
const liveLeases = (state: BreakerState, now: number) => state.leases.filter((end) => end > now);

/** How many attempts may be in flight to the endpoint now (`Infinity`: no lease needed). */
export function capacityOf(state: BreakerState, now: number): number {
  if (now < state.openUntil) return 0;
  if (!isClosed(state)) return 1;
  return state.slow ? SLOW_ENDPOINT_LEASES : Infinity;
}

/** How many more attempts may start now: what the consumer wakes of the parked deliveries. */
export const freeCapacityOf = (state: BreakerState, now: number) => capacityOf(state, now) - liveLeases(state, now).length;

/** The breaker's state as an operator or partner sees it. */
export function breakerPhase(state: BreakerState, now: number): 'closed' | 'slow' | 'probing' | 'open' {
  if (isClosed(state)) return state.slow ? 'slow' : 'closed';
  return now < state.openUntil ? 'open' : 'probing';
}

/** What an attempt to the endpoint may do now. */
export function admit(state: BreakerState, now: number): Admission {
  const capacity = capacityOf(state, now);
  if (capacity === 0) return { kind: 'park', reason: 'open', until: state.openUntil };
  if (capacity === Infinity) return { kind: 'attempt' };
  const live = liveLeases(state, now);
  if (live.length < capacity) return { kind: 'lease', probe: !isClosed(state) };
  return { kind: 'park', reason: 'busy', until: Math.min(...live) };
}

/** The state with a lease taken `now`, and the lease's end (the write is conditional on the state it was decided from). */
export function takeLease(state: BreakerState, now: number, settings: BreakerSettings): { state: BreakerState; lease: number } {
  const lease = now + settings.attemptTimeoutMs + LEASE_MARGIN_MS;
  return { state: { ...state, leases: [...liveLeases(state, now), lease] }, lease };
}

/** The state with lease `lease` given back (an attempt that never went out), or `undefined` when it is not on record. */
export function giveBackLease(state: BreakerState, lease: number): BreakerState | undefined {
  const at = state.leases.indexOf(lease);
  return at === -1 ? undefined : { ...state, leases: state.leases.toSpliced(at, 1) };
}

/** An attempt's outcome, as the breaker counts it. */
export interface AttemptOutcome {
  /** The end of the lease it went under (absent: it went freely). */
  lease?: number | undefined;
  timedOut: boolean;
  startedAt: number;
  /** How long the endpoint took to answer (or to time out). */
  tookMs: number;
}

/**
 * The state after an attempt; `undefined` when nothing changes (no write: the common case of a closed, fast
 * endpoint answering fast).
 *
 * - Its lease, if it had one still on record, is given back. It was the probe if the breaker is not closed and
 *   the lease was taken since it opened.
 * - A probe's answer closes a new endpoint's breaker; one that has timed out needs {@link PROBES_TO_CLOSE} in a
 *   row (a flapping endpoint does not get the whole consumer back on one lucky answer). A probe that times out
 *   opens it again, for twice the last cool-down (at most the cap).
 * - An attempt sent while closed opens it when it times out, unless it was sent before the last recorded answer
 *   (a stale timeout: the endpoint has answered since). Its answer sets whether the endpoint is slow (1 s or more)
 *   or fast again (under half a second; in between it stays as it is). The answer of
 *   an attempt that is not the probe does not move a breaker that is not closed.
 */
export function afterAttempt(state: BreakerState, attempt: AttemptOutcome, now: number, settings: BreakerSettings): BreakerState | undefined {
  const released = attempt.lease === undefined ? undefined : giveBackLease(state, attempt.lease);
  const base = released ?? state;
  // A lease taken since the breaker opened is its probe; one taken before (a slow endpoint's) is not.
  const probe = released !== undefined && !isClosed(state) && attempt.startedAt >= state.openUntil - state.cooldownMs;
  if (attempt.timedOut) {
    if (probe) {
      const cooldownMs = Math.min(Math.max(state.cooldownMs * 2, settings.firstCooldownMs), settings.maxCooldownMs);
      return { ...base, openUntil: now + cooldownMs, cooldownMs, probesToClose: PROBES_TO_CLOSE };
    }
    if (isClosed(state) && attempt.startedAt >= state.answeredAt) {
      return { ...base, openUntil: now + settings.firstCooldownMs, cooldownMs: settings.firstCooldownMs, probesToClose: PROBES_TO_CLOSE };
    }
    return released;
  }
  const slow = attempt.tookMs >= SLOW_ANSWER_MS || (state.slow && attempt.tookMs >= FAST_ANSWER_MS);
  if (probe) {
    const probesToClose = Math.max(0, state.probesToClose - 1);
    return probesToClose === 0
      ? { ...NEW_ENDPOINT_BREAKER, answeredAt: now, slow, leases: base.leases }
      : { ...base, answeredAt: now, probesToClose };
  }
  if (isClosed(state) && slow !== state.slow) return { ...base, answeredAt: now, slow };
  return released;
}
