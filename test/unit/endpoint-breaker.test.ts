/**
 * An endpoint's circuit breaker (lib/domain/endpoint-breaker.ts): a never-answered endpoint is probed one attempt
 * at a time; a timeout opens the breaker and each probe that times out doubles its cool-down up to the cap; any
 * answer in time closes it; a closed breaker and an answer need no write.
 */
import { describe, expect, it } from '@jest/globals';
import { admit, afterAttempt, breakerSettings, NEW_ENDPOINT_BREAKER, startProbe, type BreakerState } from '../../lib/domain/endpoint-breaker';

const settings = breakerSettings(10_000);
const T = 1_700_000_000_000;
const closed: BreakerState = { ...NEW_ENDPOINT_BREAKER, answeredAt: T - 60_000 };

describe('an endpoint breaker', () => {
  it('lets every attempt through while closed, and writes nothing when it answers', () => {
    expect(admit(closed, T, settings)).toEqual({ kind: 'attempt' });
    expect(afterAttempt(closed, { probe: false, timedOut: false }, T, settings)).toBeUndefined();
  });

  it('probes a new endpoint one attempt at a time: others wait a moment while the probe is young, then until its outcome', () => {
    expect(admit(NEW_ENDPOINT_BREAKER, T, settings)).toEqual({ kind: 'probe' });
    const probing = startProbe(NEW_ENDPOINT_BREAKER, T, settings);
    expect(probing).toMatchObject({ probeStartedAt: T, probeUntil: T + 15_000 });

    expect(admit(probing, T + 200, settings)).toEqual({ kind: 'defer', until: T + 1_000, spreadMs: 500, reason: 'probing' });
    expect(admit(probing, T + 2_000, settings)).toEqual({ kind: 'defer', until: T + 11_000, spreadMs: 5_000, reason: 'probing' });
    // A probe whose consumer stopped: its lease runs out, and the next attempt probes
    expect(admit(probing, T + 15_000, settings)).toEqual({ kind: 'probe' });
  });

  it('closes on any answer in time (a 500 too: it costs the consumer nothing)', () => {
    const probing = startProbe(NEW_ENDPOINT_BREAKER, T, settings);
    expect(afterAttempt(probing, { probe: true, timedOut: false }, T + 80, settings)).toEqual({ ...NEW_ENDPOINT_BREAKER, answeredAt: T + 80 });
  });

  it('opens on the first timeout of a closed endpoint; the attempts sent beside it change nothing more', () => {
    const opened = afterAttempt(closed, { probe: false, timedOut: true }, T, settings);
    expect(opened).toMatchObject({ openUntil: T + 5_000, cooldownMs: 5_000 });
    expect(afterAttempt(opened as BreakerState, { probe: false, timedOut: true }, T + 10, settings)).toBeUndefined();
    // Waiting deliveries come back spread over the cool-down after it ends
    expect(admit(opened as BreakerState, T + 4_999, settings)).toEqual({ kind: 'defer', until: T + 5_000, spreadMs: 5_000, reason: 'open' });
    // A probe of an endpoint that has timed out before is not looked at again soon: it will likely time out too
    const probingAgain = startProbe(opened as BreakerState, T + 5_000, settings);
    expect(admit(probingAgain, T + 5_200, settings)).toEqual({ kind: 'defer', until: T + 16_000, spreadMs: 5_000, reason: 'probing' });
    expect(admit(opened as BreakerState, T + 5_000, settings)).toEqual({ kind: 'probe' });
  });

  it('doubles the cool-down with each probe that times out, up to 15 minutes', () => {
    let state: BreakerState = NEW_ENDPOINT_BREAKER;
    let now = T;
    const cooldowns: number[] = [];
    for (let probe = 0; probe < 10; probe += 1) {
      expect(admit(state, now, settings).kind).toBe('probe');
      state = startProbe(state, now, settings);
      now += 10_000;
      state = afterAttempt(state, { probe: true, timedOut: true }, now, settings) as BreakerState;
      cooldowns.push(state.cooldownMs);
      expect(state.openUntil).toBe(now + state.cooldownMs);
      now = state.openUntil;
    }
    expect(cooldowns).toEqual([5_000, 10_000, 20_000, 40_000, 80_000, 160_000, 320_000, 640_000, 900_000, 900_000]);
  });
});
