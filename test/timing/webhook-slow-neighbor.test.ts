/**
 * One partner's endpoints that do answer, but only after seconds, must not take the
 * delivery consumer from another partner (decisions.md §8). Partner A has 10 endpoints answering 200 after 4 s
 * (inside the 5 s timeout here, so their breakers never open) and a burst of payments (600 deliveries); partner B
 * has one healthy endpoint and pays while A's deliveries drain. All through the whole local pipeline (outbox →
 * stream relay → the fair queue → the real consumer, 50 invocations at most), real HTTP receivers on 127.0.0.1.
 *
 * Without a bulkhead each of A's attempts held a consumer invocation for 3.5 s: 200 of them filled all 50, and B's
 * messages waited seconds for one. Now an endpoint found slow (an answer of 1 s or more) takes two attempts at a
 * time, under leases; its other deliveries wait parked, and are woken as its leases are given back.
 */
import { describe, expect, it } from '@jest/globals';
import { SLOW_ENDPOINT_LEASES } from '../../lib/domain/endpoint-breaker';
import { noisyAndQuietPartners, paymentsOneAfterAnother, useReliabilityPipeline } from '../support/reliability/pipeline';

const ANSWER_MS = 4_000;
const SLOW_ENDPOINTS = 4;
const A_PAYMENTS = 60;
const B_PAYMENTS = 20;

const world = await useReliabilityPipeline({
  name: 'slow-neighbor',
  retryBaseMs: 300,
  attemptTimeoutMs: 5_000,
  consumerConcurrency: 12,
  behaviours: {
    ...Object.fromEntries(Array.from({ length: SLOW_ENDPOINTS }, (_, i) => [`/a/slow-${i}`, { status: 200, delayMs: ANSWER_MS }])),
    '/b/ok': { status: 200 },
  },
});
const { times, until } = await import('../support/reliability/tools');

/** The most requests to `path` whose answers were awaited at once (each held for `ANSWER_MS` from its arrival). */
function mostAtOnce(path: string): number {
  const arrivals = world.receiver.arrivals(path).map((request) => request.at);
  // (a little under the answer time: an attempt that goes out as another's answer arrives does not overlap it)
  return Math.max(0, ...arrivals.map((at) => arrivals.filter((other) => other <= at && other > at - (ANSWER_MS - 100)).length));
}

describe('one partner’s 4 endpoints that answer after 4 s, under a burst of its payments', () => {
  it('do not delay another partner’s webhooks: each holds two attempts at a time, and B’s messages never wait for a consumer', async () => {
    // Arrange: A with 10 slow endpoints, B with one healthy endpoint
    const { a, b, aClient, bClient } = await noisyAndQuietPartners(world, Array.from({ length: SLOW_ENDPOINTS }, (_, i) => `/a/slow-${i}`), '/b/ok');

    // Act: A's burst (240 deliveries); once each of A's endpoints is being probed (it is new) and the queue has
    // handed every message over, B's payments, one every 400 ms for 8 s, while A's endpoints answer their probes
    // (found slow) and A's deliveries drain
    await times(A_PAYMENTS, (i) => world.succeededPayment(a, aClient, 1_000 + i));
    const queue = world.pipeline().queue;
    await until('A’s endpoints probed', () => {
      const probed = Array.from({ length: SLOW_ENDPOINTS }, (_, i) => world.receiver.arrivals(`/a/slow-${i}`).length >= 1).every(Boolean);
      return probed && queue.stats().visible === 0 ? true : undefined;
    }, 30_000);
    const { deliveries: bDeliveries } = await paymentsOneAfterAnother(world, b, bClient, B_PAYMENTS, 400);

    // Assert: A was still draining while B paid (the test would show nothing otherwise)
    const aDelivered = (await world.deliveriesOf(a)).filter((delivery) => delivery.status === 'succeeded').length;
    expect(aDelivered).toBeLessThan(A_PAYMENTS * SLOW_ENDPOINTS);

    // Assert: B's webhooks arrived at the first attempt, and none of B's messages waited for a consumer (held behind
    // A's attempts it would wait up to 4 s)
    expect(bDeliveries.every((delivery) => delivery.attempts === 1)).toBe(true);
    const dwell = world.dwellTimesOf(b.partnerId);
    expect(dwell.length).toBeGreaterThanOrEqual(B_PAYMENTS); // (a delivery parked behind B’s first probe has two)
    expect(Math.max(...dwell)).toBeLessThan(1_000);

    // Assert: no endpoint of A ever had more than two attempts awaiting an answer; of A's newest 200 deliveries
    // (one page; still draining, two at a time per endpoint) none failed and none was attempted twice
    for (let i = 0; i < SLOW_ENDPOINTS; i += 1) expect(mostAtOnce(`/a/slow-${i}`)).toBeLessThanOrEqual(SLOW_ENDPOINT_LEASES);
    const aDeliveries = await world.deliveriesOf(a);
    expect(aDeliveries).toHaveLength(200);
    expect(aDeliveries.every((delivery) => delivery.status !== 'failed' && delivery.attempts <= 1)).toBe(true);
    expect(world.unprocessed).toEqual([]);
  }, 120_000);
});
