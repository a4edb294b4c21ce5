/**
 * An endpoint's circuit breaker (lib/domain/endpoint-breaker.ts): a never-answered endpoint is probed one attempt
 * at a time; a timeout opens the breaker and each probe that times out doubles its cool-down up to the cap; a new
 * endpoint's first answer closes it, one that timed out needs 3 answered probes in a row; a stale timeout (of an
 * attempt sent before the last answer) changes nothing; a closed breaker and an answer need no write.
 */
import { describe, expect, it } from '@jest/globals';
import { admit, afterAttempt, breakerPhase, breakerSettings, LEGACY_ENDPOINT_BREAKER, NEW_ENDPOINT_BREAKER, startProbe, type BreakerState } from '../../lib/domain/endpoint-breaker';

const settings = breakerSettings(10_000);
const T = 1_700_000_000_000;
const closed: BreakerState = { ...NEW_ENDPOINT_BREAKER, answeredAt: T - 60_000 };
const attempt = (probe: boolean, timedOut: boolean, startedAt = T - 10_000) => ({ probe, timedOut, startedAt });

/** Times out the probe of `state` at `now`: the state after, opened again. */
const probeTimesOut = (state: BreakerState, now: number) => afterAttempt(startProbe(state, now - 10_000, settings), attempt(true, true, now - 10_000), now, settings) as BreakerState;

describe('an endpoint breaker', () => {
  it('lets every attempt through while closed, and writes nothing when it answers', () => {
    expect(admit(closed, T, settings)).toEqual({ kind: 'attempt' });
    expect(afterAttempt(closed, attempt(false, false), T, settings)).toBeUndefined();
    // An endpoint created before breakers were kept was being delivered to freely: closed
    expect(admit(LEGACY_ENDPOINT_BREAKER, T, settings)).toEqual({ kind: 'attempt' });
  });

  it('probes a new endpoint one attempt at a time: others wait a moment while the probe is young, then until its outcome', () => {
    expect(admit(NEW_ENDPOINT_BREAKER, T, settings)).toEqual({ kind: 'probe' });
    const probing = startProbe(NEW_ENDPOINT_BREAKER, T, settings);
    expect(probing).toMatchObject({ probeStartedAt: T, probeUntil: T + 15_000 });
    expect(breakerPhase(probing, T)).toBe('probing');

    expect(admit(probing, T + 200, settings)).toEqual({ kind: 'defer', until: T + 1_000, spreadMs: 500, reason: 'probing' });
    expect(admit(probing, T + 2_000, settings)).toEqual({ kind: 'defer', until: T + 11_000, spreadMs: 5_000, reason: 'probing' });
    // A probe whose consumer stopped: its lease runs out, and the next attempt probes
    expect(admit(probing, T + 15_000, settings)).toEqual({ kind: 'probe' });
  });

  it('closes a new endpoint on its first answer in time (a 500 too: it costs the consumer nothing)', () => {
    const probing = startProbe(NEW_ENDPOINT_BREAKER, T, settings);
    expect(afterAttempt(probing, attempt(true, false, T), T + 80, settings)).toEqual({ ...NEW_ENDPOINT_BREAKER, answeredAt: T + 80 });
  });

  it('opens on the first timeout of a closed endpoint; the attempts sent beside it change nothing more', () => {
    const opened = afterAttempt(closed, attempt(false, true), T, settings) as BreakerState;
    expect(opened).toMatchObject({ openUntil: T + 5_000, cooldownMs: 5_000, probesToClose: 3 });
    expect(breakerPhase(opened, T)).toBe('open');
    expect(afterAttempt(opened, attempt(false, true), T + 10, settings)).toBeUndefined();
    // ... and their answers do not close it: only probes move a breaker that is not closed
    expect(afterAttempt(opened, attempt(false, false), T + 20, settings)).toBeUndefined();
    // Waiting deliveries come back spread over the cool-down after it ends
    expect(admit(opened, T + 4_999, settings)).toEqual({ kind: 'defer', until: T + 5_000, spreadMs: 5_000, reason: 'open' });
    expect(admit(opened, T + 5_000, settings)).toEqual({ kind: 'probe' });
    // A probe of an endpoint that has timed out is not looked at again soon: it will likely time out too
    const probingAgain = startProbe(opened, T + 5_000, settings);
    expect(admit(probingAgain, T + 5_200, settings)).toEqual({ kind: 'defer', until: T + 16_000, spreadMs: 5_000, reason: 'probing' });
  });

  it('ignores a stale timeout: an attempt sent before the endpoint last answered', () => {
    expect(afterAttempt(closed, attempt(false, true, closed.answeredAt - 1), T, settings)).toBeUndefined();
    expect(afterAttempt(closed, attempt(false, true, closed.answeredAt), T, settings)).toMatchObject({ openUntil: T + 5_000 });
  });

  it('closes an endpoint that timed out only after 3 probes in a row have answered; a timeout among them opens it again', () => {
    let state = afterAttempt(closed, attempt(false, true), T, settings) as BreakerState;
    let now = T + 5_000;
    for (const left of [2, 1]) {
      expect(admit(state, now, settings)).toEqual({ kind: 'probe' });
      state = afterAttempt(startProbe(state, now, settings), attempt(true, false, now), now + 50, settings) as BreakerState;
      expect(state).toMatchObject({ probesToClose: left, probeUntil: 0 });
      expect(breakerPhase(state, now + 50)).toBe('probing');
      // while it recovers, a waiting delivery looks again soon after the next probe starts
      expect(admit(startProbe(state, now + 60, settings), now + 100, settings)).toMatchObject({ until: now + 1_060, reason: 'probing' });
      now += 100;
    }
    const recovered = afterAttempt(startProbe(state, now, settings), attempt(true, false, now), now + 50, settings) as BreakerState;
    expect(recovered).toEqual({ ...NEW_ENDPOINT_BREAKER, answeredAt: now + 50 });

    const relapsed = probeTimesOut({ ...state, probesToClose: 1 }, now + 10_000);
    expect(relapsed).toMatchObject({ probesToClose: 3, cooldownMs: 10_000, openUntil: now + 20_000 });
  });

  it('doubles the cool-down with each probe that times out, up to 15 minutes', () => {
    let state: BreakerState = NEW_ENDPOINT_BREAKER;
    let now = T;
    const cooldowns: number[] = [];
    for (let probe = 0; probe < 10; probe += 1) {
      expect(admit(state, now, settings).kind).toBe('probe');
      now += 10_000;
      state = probeTimesOut(state, now);
      cooldowns.push(state.cooldownMs);
      expect(state.openUntil).toBe(now + state.cooldownMs);
      now = state.openUntil;
    }
    expect(cooldowns).toEqual([5_000, 10_000, 20_000, 40_000, 80_000, 160_000, 320_000, 640_000, 900_000, 900_000]);
  });
});
