/**
 * The consumer's per-process cache of endpoints (lib/store/endpoint-cache.ts): one read a second per endpoint,
 * this process's own breaker writes kept in it, a lost write dropping the entry so the next look reads afresh.
 */
import { describe, expect, it } from '@jest/globals';
import { cachedEndpoints } from '../../../lib/store/endpoint-cache';
import { NEW_ENDPOINT_BREAKER, type BreakerState } from '../../../lib/domain/endpoint-breaker';
import type { StoredBreaker } from '../../../lib/store/webhook-endpoints';
import type { BreakerStore, EndpointStore } from '../../../lib/use-cases/webhook-deliveries';

function fakeStore() {
  let stored: StoredBreaker = { state: NEW_ENDPOINT_BREAKER, revision: 0 };
  let reads = 0;
  const endpoint = { id: 'whe_1', partnerId: 'ptn_1', name: 'Orders', url: 'https://example.com/hooks', events: [], createdAt: '2026-01-01T00:00:00.000Z' };
  const endpoints: EndpointStore = {
    getWebhookEndpointWithSecret: async () => {
      reads += 1;
      return { endpoint, secret: {} as never, breaker: stored };
    },
  };
  const breakers: BreakerStore = {
    getBreaker: async () => stored,
    putBreaker: async (_partner, _endpoint, state, readRevision) => {
      if (readRevision !== stored.revision) return false;
      stored = { state, revision: readRevision + 1 };
      return true;
    },
  };
  return { endpoints, breakers, reads: () => reads, setStored: (breaker: StoredBreaker) => void (stored = breaker) };
}

describe('the consumer’s endpoint cache', () => {
  it('reads an endpoint at most once a second', async () => {
    const store = fakeStore();
    let now = 1_000_000;
    const cached = cachedEndpoints(store.endpoints, store.breakers, () => now);

    await cached.endpoints.getWebhookEndpointWithSecret('ptn_1', 'whe_1');
    now += 999;
    await cached.endpoints.getWebhookEndpointWithSecret('ptn_1', 'whe_1');
    expect(store.reads()).toBe(1);
    now += 1;
    await cached.endpoints.getWebhookEndpointWithSecret('ptn_1', 'whe_1');
    expect(store.reads()).toBe(2);
  });

  it('keeps its own breaker writes, and drops the entry when a write is lost to another process', async () => {
    const store = fakeStore();
    const cached = cachedEndpoints(store.endpoints, store.breakers, () => 1_000_000);
    await cached.endpoints.getWebhookEndpointWithSecret('ptn_1', 'whe_1');
    const probing: BreakerState = { ...NEW_ENDPOINT_BREAKER, leases: [2] };

    expect(await cached.breakers.putBreaker('ptn_1', 'whe_1', probing, 0)).toBe(true);
    expect((await cached.endpoints.getWebhookEndpointWithSecret('ptn_1', 'whe_1'))?.breaker).toEqual({ state: probing, revision: 1 });
    expect(store.reads()).toBe(1);

    // Another process moves the breaker on: this one's write, from revision 1, is lost
    store.setStored({ state: NEW_ENDPOINT_BREAKER, revision: 5 });
    expect(await cached.breakers.putBreaker('ptn_1', 'whe_1', probing, 1)).toBe(false);
    expect((await cached.endpoints.getWebhookEndpointWithSecret('ptn_1', 'whe_1'))?.breaker.revision).toBe(5);
    expect(store.reads()).toBe(2);
  });

});
