/**
 * No partner waits on another's webhooks (decisions.md §8). Partner A has 20 endpoints that never answer
 * and a burst of payments (20 deliveries each); partner B, one healthy endpoint and payments arriving while A's
 * deliveries time out, are probed and parked. All of it through the whole local pipeline (outbox → stream relay
 * → the fair queue → the real consumer), real HTTP receivers on 127.0.0.1.
 *
 * Before the fix (5 consumer invocations, every attempt to a dead endpoint holding its batch for the timeout,
 * oldest message first) B's webhooks waited behind A's timeouts: seconds, growing with A's volume. Now each of
 * A's endpoints holds at most one attempt at a time (its breaker's probe), the rest are parked in
 * milliseconds (no queue message until the endpoint can take them), and the fair queue hands B's messages out first. The sender's timeout is 5 s here, so a B
 * webhook held up by even one of A's attempts would show.
 */
import { describe, expect, it } from '@jest/globals';
import { noisyAndQuietPartners, paymentsOneAfterAnother, useReliabilityPipeline } from '../support/reliability/pipeline';

const ATTEMPT_TIMEOUT_MS = 5_000;
const DEAD_ENDPOINTS = 20;
const A_PAYMENTS = 20;
const B_PAYMENTS = 10;

const world = await useReliabilityPipeline({
  name: 'noisy-neighbor',
  retryBaseMs: 300,
  attemptTimeoutMs: ATTEMPT_TIMEOUT_MS,
  behaviours: {
    ...Object.fromEntries(Array.from({ length: DEAD_ENDPOINTS }, (_, i) => [`/a/dead-${i}`, { hang: true as const }])),
    '/b/ok': { status: 200 },
  },
});
const { times, until } = await import('../support/reliability/tools');

describe('one partner’s 20 endpoints that never answer, under a burst of its payments', () => {
  it('do not delay another partner’s webhooks: none of B’s messages waits for a consumer behind A’s timeouts, and A’s endpoints get one attempt at a time', async () => {
    // Arrange: A with 20 dead endpoints, B with one healthy endpoint
    const { a, b, aClient, bClient } = await noisyAndQuietPartners(world, Array.from({ length: DEAD_ENDPOINTS }, (_, i) => `/a/dead-${i}`), '/b/ok');

    // Act: A's burst (400 deliveries); once the consumer has taken every one of them in (A's endpoints are being
    // probed, the rest parked), B's payments, one every 400 ms, while A's endpoints are probed again at each
    // cool-down's end
    await times(A_PAYMENTS, (i) => world.succeededPayment(a, aClient, 1_000 + i));
    const queue = world.pipeline().queue;
    await until('A’s burst taken in', () => {
      const probed = world.receiver.requests.filter((request) => request.path.startsWith('/a/')).length >= DEAD_ENDPOINTS;
      const stats = queue.stats();
      // (probes in flight hold their whole batch in flight: what matters is that nothing waits for a consumer)
      return probed && stats.sent >= A_PAYMENTS * DEAD_ENDPOINTS && stats.visible === 0 ? true : undefined;
    }, 60_000);
    const { payments: bPayments, deliveries: bDeliveries } = await paymentsOneAfterAnother(world, b, bClient, B_PAYMENTS, 400);

    // Assert: B's webhooks arrived at the first attempt; none of B's messages waited in the queue for a consumer
    // (its dwell time: held behind A's attempts it would be up to the whole 5 s timeout); end to end, most within a
    // few hundred milliseconds (the figure under load is the bench's)
    const postedAt = new Map(bPayments.map((payment) => [payment.svcTxId, payment.postedAt]));
    const latencies = bDeliveries
      .map((delivery) => (world.receiver.arrivals('/b/ok', delivery.event_id)[0]?.at ?? Infinity) - (postedAt.get(delivery.svc_tx_id) ?? 0))
      .sort((x, y) => x - y);
    expect(bDeliveries.every((delivery) => delivery.attempts === 1)).toBe(true);
    // (at least one message per payment: B's new endpoint takes one probe at a time until its first answer, so a
    // payment posted while that probe is still out is parked and comes back by a second message)
    const dwell = world.dwellTimesOf(b.partnerId);
    expect(dwell.length).toBeGreaterThanOrEqual(B_PAYMENTS);
    expect(Math.max(...dwell)).toBeLessThan(1_000);
    expect(latencies[Math.floor(latencies.length / 2)]).toBeLessThan(1_000);

    // Assert: each dead endpoint had one attempt in flight at a time (its probes, a timeout apart), and A's
    // deliveries wait pending with their attempts counted, none lost nor failed early
    for (let i = 0; i < DEAD_ENDPOINTS; i += 1) {
      const arrivals = world.receiver.arrivals(`/a/dead-${i}`).map((arrival) => arrival.at);
      expect(arrivals.length).toBeGreaterThanOrEqual(1);
      for (let k = 1; k < arrivals.length; k += 1) expect((arrivals[k] ?? 0) - (arrivals[k - 1] ?? 0)).toBeGreaterThanOrEqual(ATTEMPT_TIMEOUT_MS);
    }
    const aDeliveries = await world.deliveriesOf(a);
    expect(aDeliveries).toHaveLength(Math.min(200, A_PAYMENTS * DEAD_ENDPOINTS));
    expect(aDeliveries.every((delivery) => delivery.status === 'pending' && delivery.attempts <= 3)).toBe(true);
    expect(world.unprocessed).toEqual([]);
    expect(world.pipeline().queue.deadLetters()).toEqual([]);
  }, 120_000);
});
