/**
 * The circuit breaker of one partner webhook endpoint (decisions.md §8: one endpoint's timeouts do not hold the
 * delivery consumer's capacity). Pure: the store keeps the state on the endpoint's item, the consumer asks
 * {@link admit} before an attempt and {@link afterAttempt} after it.
 *
 * - **Closed** (the endpoint has answered, and has not timed out since): attempts go out freely, as many at once
 *   as the queue hands over. A healthy endpoint costs no write here.
 * - **Probing** (an endpoint that has never answered, or whose breaker's cool-down has passed): one attempt
 *   at a time, the probe, under a lease. Other deliveries wait (deferred: their attempt count unchanged) until
 *   the probe is over: briefly while it is young (a healthy endpoint answers a probe in milliseconds), until
 *   the probe's lease ends once it has been running for a while (it is probably timing out).
 * - **Open** (a probe, or an attempt while closed, timed out): nothing goes to the endpoint until the
 *   cool-down ends; each probe that times out doubles it, up to 15 minutes ({@link breakerSettings}).
 * A probe's answer in time (any HTTP status: a fast 500 costs the consumer nothing) closes the breaker, after
 * {@link PROBES_TO_CLOSE} in a row for an endpoint that has timed out; only timeouts open it. So a dead endpoint
 * costs the consumer one attempt in flight at a time and a cheap deferral per waiting delivery, and a healthy
 * one nothing.
 */

/** The breaker's state (epoch milliseconds; 0: not set). */
export interface BreakerState {
  /** The last answer in time to a probe, or to an attempt while closed (0: the endpoint has never answered). */
  answeredAt: number;
  /** Open until then; once past, probing until {@link probesToClose} probes in a row have answered (0: never timed out since closed). */
  openUntil: number;
  /** The last cool-down, doubled by the next probe that times out (0: none). */
  cooldownMs: number;
  /** A probe runs from `probeStartedAt` until at most `probeUntil` (its lease; 0: none). */
  probeStartedAt: number;
  probeUntil: number;
  /** Probes still to answer in a row before an endpoint that timed out is closed again. */
  probesToClose: number;
}

/** A new endpoint: probed once, closed by its first answer. */
export const NEW_ENDPOINT_BREAKER: BreakerState = { answeredAt: 0, openUntil: 0, cooldownMs: 0, probeStartedAt: 0, probeUntil: 0, probesToClose: 0 };

/** An endpoint created before breakers were kept: it was being delivered to freely, so it starts closed. */
export const LEGACY_ENDPOINT_BREAKER: BreakerState = { ...NEW_ENDPOINT_BREAKER, answeredAt: 1 };

/** Probes that must answer in a row before an endpoint that timed out takes attempts freely again. */
export const PROBES_TO_CLOSE = 3;

/** The breaker's timings (tests shorten them with the sender's timeout). */
export interface BreakerSettings {
  /** The sender's timeout: a probe's outcome is known by then (plus {@link OUTCOME_MARGIN_MS}). */
  attemptTimeoutMs: number;
  /** While a probe is younger than this, waiting deliveries look again this soon after it started. */
  youngProbeMs: number;
  /** The first cool-down after a timeout; each probe that times out doubles it. */
  firstCooldownMs: number;
  /** The longest cool-down (SQS's longest message delay: a waiting delivery is deferred by one message). */
  maxCooldownMs: number;
}

/** Time to record an attempt's outcome after the attempt: two writes. */
const OUTCOME_MARGIN_MS = 1_000;
/** A probe's lease runs this long past its attempt's timeout: only a consumer that stopped mid-probe lets it run out. */
const PROBE_LEASE_MARGIN_MS = 5_000;

export const breakerSettings = (attemptTimeoutMs: number): BreakerSettings => ({
  attemptTimeoutMs,
  youngProbeMs: 1_000,
  firstCooldownMs: 5_000,
  maxCooldownMs: 900_000,
});

export type Admission =
  /** Closed: attempt. */
  | { kind: 'attempt' }
  /** Open, or a probe running: look again at `until` plus up to `spreadMs` (the waiting deliveries' jitter). */
  | { kind: 'defer'; until: number; spreadMs: number; reason: 'open' | 'probing' }
  /** Probing and no probe running: this attempt may be the probe, if it wins the probe's lease. */
  | { kind: 'probe' };

export const isClosed = (state: BreakerState) => state.answeredAt > 0 && state.openUntil === 0;

/** The breaker's state as an operator or partner sees it. */
export function breakerPhase(state: BreakerState, now: number): 'closed' | 'probing' | 'open' {
  if (isClosed(state)) return 'closed';
  return now < state.openUntil ? 'open' : 'probing';
}

/**
 * What an attempt to the endpoint may do now. While open, waiting deliveries come back spread over the
 * cool-down after it ends (the first of them probes; the rest, arriving one by one, cost a read each). While a
 * probe runs, they look again once its outcome should be recorded; only a probe likely to answer (of a new
 * endpoint, or one whose last probe answered) is looked at again soon after it started.
 */
export function admit(state: BreakerState, now: number, settings: BreakerSettings): Admission {
  if (isClosed(state)) return { kind: 'attempt' };
  if (now < state.openUntil) return { kind: 'defer', until: state.openUntil, spreadMs: state.cooldownMs, reason: 'open' };
  if (now < state.probeUntil) {
    const youngUntil = state.probeStartedAt + settings.youngProbeMs;
    // A new endpoint, or one whose last probe answered: this probe likely answers in milliseconds too.
    const likelyAnswers = state.cooldownMs === 0 || state.probesToClose < PROBES_TO_CLOSE;
    if (likelyAnswers && now < youngUntil) return { kind: 'defer', until: youngUntil, spreadMs: settings.youngProbeMs / 2, reason: 'probing' };
    const outcomeBy = Math.min(state.probeUntil, state.probeStartedAt + settings.attemptTimeoutMs + OUTCOME_MARGIN_MS);
    const spreadMs = Math.max(settings.youngProbeMs, state.cooldownMs, settings.attemptTimeoutMs / 2);
    return { kind: 'defer', until: Math.max(outcomeBy, now + settings.youngProbeMs), spreadMs, reason: 'probing' };
  }
  return { kind: 'probe' };
}

/** The state with a probe started `now` (the write is conditional on the state it was decided from). */
export const startProbe = (state: BreakerState, now: number, settings: BreakerSettings): BreakerState => ({
  ...state,
  probeStartedAt: now,
  probeUntil: now + settings.attemptTimeoutMs + PROBE_LEASE_MARGIN_MS,
});

/**
 * The state after an attempt, `probe` or not, started at `startedAt`, answered in time or timed out; `undefined`
 * when nothing changes (no write: the common case of a closed breaker and an answer).
 *
 * - A probe's answer closes a new endpoint's breaker; one that has timed out needs {@link PROBES_TO_CLOSE} in a
 *   row (a flapping endpoint does not get the whole consumer back on one lucky answer). A probe that times out
 *   opens it again, for twice the last cool-down (at most the cap).
 * - An attempt sent while closed opens it when it times out, unless it was sent before the last answer (a stale
 *   timeout: the endpoint has answered since). Its answer changes nothing: only probes move a breaker that is
 *   not closed.
 */
export function afterAttempt(
  state: BreakerState,
  attempt: { probe: boolean; timedOut: boolean; startedAt: number },
  now: number,
  settings: BreakerSettings,
): BreakerState | undefined {
  if (attempt.probe) {
    if (attempt.timedOut) {
      const cooldownMs = Math.min(Math.max(state.cooldownMs * 2, settings.firstCooldownMs), settings.maxCooldownMs);
      return { ...state, openUntil: now + cooldownMs, cooldownMs, probeStartedAt: 0, probeUntil: 0, probesToClose: PROBES_TO_CLOSE };
    }
    const probesToClose = Math.max(0, state.probesToClose - 1);
    return probesToClose === 0
      ? { ...NEW_ENDPOINT_BREAKER, answeredAt: now }
      : { ...state, answeredAt: now, probeStartedAt: 0, probeUntil: 0, probesToClose };
  }
  if (attempt.timedOut && isClosed(state) && attempt.startedAt >= state.answeredAt) {
    return { ...state, openUntil: now + settings.firstCooldownMs, cooldownMs: settings.firstCooldownMs, probesToClose: PROBES_TO_CLOSE };
  }
  return undefined;
}

/** A probe that never went out (its delivery was claimed by another consumer meanwhile): its lease is given back. */
export const withoutProbe = (state: BreakerState): BreakerState => ({ ...state, probeStartedAt: 0, probeUntil: 0 });
