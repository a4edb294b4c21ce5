/**
 * An endpoint's breaker and bulkhead (lib/domain/endpoint-breaker.ts): a closed, fast endpoint takes attempts freely
 * and costs no write; a slow one two at a time under leases; a never-answered endpoint is probed one attempt at a
 * time; a timeout opens the breaker and each probe that times out doubles its cool-down up to the cap; a new
 * endpoint's first answer closes it, one that timed out needs 3 answered probes in a row; a stale timeout (of an
 * attempt sent before the last answer) changes nothing.
 */
import { describe, expect, it } from '@jest/globals';
import {
  admit,
  afterAttempt,
  type AttemptOutcome,
  breakerPhase,
  breakerSettings,
  type BreakerState,
  freeCapacityOf,
  giveBackLease,
  LEGACY_ENDPOINT_BREAKER,
  NEW_ENDPOINT_BREAKER,
  takeLease,
} from '../../../lib/domain/endpoint-breaker';

const settings = breakerSettings(10_000);
const T = 1_700_000_000_000;
const closed: BreakerState = { ...NEW_ENDPOINT_BREAKER, answeredAt: T - 60_000 };
const answered = (tookMs: number, lease?: number, startedAt = T - tookMs): AttemptOutcome => ({ lease, timedOut: false, startedAt, tookMs });
const timedOut = (lease?: number, startedAt = T - 10_000): AttemptOutcome => ({ lease, timedOut: true, startedAt, tookMs: 10_000 });

/** The probe of `state`, taken at `now - 10 s`, times out at `now`: the state after, opened again. */
function probeTimesOut(state: BreakerState, now: number): BreakerState {
  const { state: probing, lease } = takeLease(state, now - 10_000, settings);
  return afterAttempt(probing, timedOut(lease, now - 10_000), now, settings) as BreakerState;
}

describe('an endpoint breaker', () => {
  it('lets every attempt through while closed and fast, and writes nothing when it answers fast', () => {
    expect(admit(closed, T)).toEqual({ kind: 'attempt' });
    expect(freeCapacityOf(closed, T)).toBe(Infinity);
    expect(afterAttempt(closed, answered(300), T, settings)).toBeUndefined();
    // An endpoint created before breakers were kept was being delivered to freely: closed
    expect(admit(LEGACY_ENDPOINT_BREAKER, T)).toEqual({ kind: 'attempt' });
  });

  it('takes a slow endpoint two attempts at a time, each under a lease, and frees it again on a fast answer', () => {
    // A free attempt that took 1 s or more marks the endpoint slow (one write)
    const slow = afterAttempt(closed, answered(1_000), T, settings) as BreakerState;
    expect(slow).toMatchObject({ slow: true, leases: [] });
    expect(breakerPhase(slow, T)).toBe('slow');
    expect(afterAttempt(slow, answered(4_000), T, settings)).toBeUndefined(); // already slow: no write
    expect(admit(slow, T)).toEqual({ kind: 'lease', probe: false });
    const one = takeLease(slow, T, settings);
    expect(one.lease).toBe(T + 15_000);
    const two = takeLease(one.state, T + 1, settings);
    expect(admit(two.state, T + 2)).toEqual({ kind: 'park', reason: 'busy', until: T + 15_000 });
    expect(freeCapacityOf(two.state, T + 2)).toBe(0);

    // An answer gives its lease back: one free again (and still slow)
    const back = afterAttempt(two.state, { ...answered(9_900, one.lease) }, T + 9_900, settings) as BreakerState;
    expect(back).toMatchObject({ slow: true, leases: [two.lease] });
    expect(freeCapacityOf(back, T + 9_900)).toBe(1);
    // An answer between half a second and a second leaves it slow (no write: no flapping around one threshold)
    expect(afterAttempt(one.state, answered(700), T + 800, settings)).toBeUndefined();
    expect(afterAttempt(closed, answered(700), T + 800, settings)).toBeUndefined();
    // A fast answer (under half a second) makes it fast: no lease needed any more
    const fast = afterAttempt(back, answered(50, two.lease), T + 9_950, settings) as BreakerState;
    expect(fast).toMatchObject({ slow: false, leases: [], answeredAt: T + 9_950 });
    expect(admit(fast, T + 9_950)).toEqual({ kind: 'attempt' });
  });

  it('lets a lease whose consumer stopped run out, and gives back a lease whose attempt never went out', () => {
    const slow: BreakerState = { ...closed, slow: true };
    const one = takeLease(slow, T, settings);
    const two = takeLease(one.state, T, settings);
    expect(admit(two.state, T + 15_000)).toEqual({ kind: 'lease', probe: false });
    expect(takeLease(two.state, T + 15_000, settings).state.leases).toEqual([T + 30_000]);
    expect(giveBackLease(two.state, one.lease)?.leases).toEqual([two.lease]);
    expect(giveBackLease(slow, one.lease)).toBeUndefined();
  });

  it('probes a new endpoint one attempt at a time: the others park until the probe is over', () => {
    expect(admit(NEW_ENDPOINT_BREAKER, T)).toEqual({ kind: 'lease', probe: true });
    const { state: probing, lease } = takeLease(NEW_ENDPOINT_BREAKER, T, settings);
    expect(breakerPhase(probing, T)).toBe('probing');
    expect(admit(probing, T + 200)).toEqual({ kind: 'park', reason: 'busy', until: lease });
    // A probe whose consumer stopped: its lease runs out, and the next attempt probes
    expect(admit(probing, lease)).toEqual({ kind: 'lease', probe: true });
  });

  it('closes a new endpoint on its first answer in time (a 500 too: it costs the consumer nothing), slow or not', () => {
    const { state: probing, lease } = takeLease(NEW_ENDPOINT_BREAKER, T, settings);
    expect(afterAttempt(probing, answered(80, lease), T + 80, settings)).toEqual({ ...NEW_ENDPOINT_BREAKER, answeredAt: T + 80 });
    expect(afterAttempt(probing, answered(9_900, lease), T + 9_900, settings)).toEqual({ ...NEW_ENDPOINT_BREAKER, answeredAt: T + 9_900, slow: true });
  });

  it('opens on the first timeout of a closed endpoint; the attempts sent beside it change nothing more', () => {
    const opened = afterAttempt(closed, timedOut(), T, settings) as BreakerState;
    expect(opened).toMatchObject({ openUntil: T + 5_000, cooldownMs: 5_000, probesToClose: 3 });
    expect(breakerPhase(opened, T)).toBe('open');
    expect(afterAttempt(opened, timedOut(), T + 10, settings)).toBeUndefined();
    // ... and their answers do not close it: only probes move a breaker that is not closed
    expect(afterAttempt(opened, answered(20), T + 20, settings)).toBeUndefined();
    // Deliveries park until the cool-down ends; then one probes
    expect(admit(opened, T + 4_999)).toEqual({ kind: 'park', reason: 'open', until: T + 5_000 });
    expect(freeCapacityOf(opened, T + 4_999)).toBe(0);
    expect(admit(opened, T + 5_000)).toEqual({ kind: 'lease', probe: true });
    expect(freeCapacityOf(opened, T + 5_000)).toBe(1);
  });

  it('does not count a slow endpoint’s lease taken before the breaker opened as its probe', () => {
    const { state, lease } = takeLease({ ...closed, slow: true }, T - 2_000, settings);
    const opened = afterAttempt(state, timedOut(undefined, T - 10_000), T, settings) as BreakerState;
    expect(opened).toMatchObject({ openUntil: T + 5_000, leases: [lease] });
    // Its answer gives the lease back and moves the breaker no nearer closing; its timeout opens it no longer
    expect(afterAttempt(opened, { lease, timedOut: false, startedAt: T - 2_000, tookMs: 2_500 }, T + 500, settings)).toEqual({ ...opened, leases: [] });
    expect(afterAttempt(opened, { lease, timedOut: true, startedAt: T - 2_000, tookMs: 10_000 }, T + 8_000, settings)).toEqual({ ...opened, leases: [] });
  });

  it('opens a slow endpoint that times out, and gives the lease of that attempt back', () => {
    const { state, lease } = takeLease({ ...closed, slow: true }, T - 10_000, settings);
    expect(afterAttempt(state, timedOut(lease), T, settings)).toMatchObject({ openUntil: T + 5_000, leases: [] });
  });

  it('ignores a stale timeout: an attempt sent before the endpoint last answered', () => {
    expect(afterAttempt(closed, timedOut(undefined, closed.answeredAt - 1), T, settings)).toBeUndefined();
    expect(afterAttempt(closed, timedOut(undefined, closed.answeredAt), T, settings)).toMatchObject({ openUntil: T + 5_000 });
  });

  it('closes an endpoint that timed out only after 3 probes in a row have answered; a timeout among them opens it again', () => {
    let state = afterAttempt(closed, timedOut(), T, settings) as BreakerState;
    let now = T + 5_000;
    for (const left of [2, 1]) {
      expect(admit(state, now)).toEqual({ kind: 'lease', probe: true });
      const { state: probing, lease } = takeLease(state, now, settings);
      state = afterAttempt(probing, answered(50, lease, now), now + 50, settings) as BreakerState;
      expect(state).toMatchObject({ probesToClose: left, leases: [] });
      expect(breakerPhase(state, now + 50)).toBe('probing');
      now += 100;
    }
    const { state: last, lease } = takeLease(state, now, settings);
    expect(afterAttempt(last, answered(50, lease, now), now + 50, settings)).toEqual({ ...NEW_ENDPOINT_BREAKER, answeredAt: now + 50 });

    const relapsed = probeTimesOut({ ...state, probesToClose: 1 }, now + 10_000);
    expect(relapsed).toMatchObject({ probesToClose: 3, cooldownMs: 10_000, openUntil: now + 20_000 });
  });

  it('counts an answer as the probe only while its lease is on record', () => {
    const opened = afterAttempt(closed, timedOut(), T, settings) as BreakerState;
    const { state: probing } = takeLease(opened, T + 5_000, settings);
    // An attempt under a lease that is not this probe's (it ran out and was taken again): nothing changes
    expect(afterAttempt(probing, answered(50, T + 1), T + 5_100, settings)).toBeUndefined();
  });

  it('doubles the cool-down with each probe that times out, up to 15 minutes', () => {
    let state: BreakerState = NEW_ENDPOINT_BREAKER;
    let now = T;
    const cooldowns: number[] = [];
    for (let probe = 0; probe < 10; probe += 1) {
      expect(admit(state, now).kind).toBe('lease');
      now += 10_000;
      state = probeTimesOut(state, now);
      cooldowns.push(state.cooldownMs);
      expect(state.openUntil).toBe(now + state.cooldownMs);
      now = state.openUntil;
    }
    expect(cooldowns).toEqual([5_000, 10_000, 20_000, 40_000, 80_000, 160_000, 320_000, 640_000, 900_000, 900_000]);
  });
});
