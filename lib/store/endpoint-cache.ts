/**
 * The delivery consumer's view of webhook endpoints, cached for a second per process (one Lambda container, or
 * the local runtime). Every attempt and every park needs its endpoint's item (URL, sealed secret, breaker),
 * and one partner's traffic to one endpoint is one item: read for each message, thousands a second would pass a
 * partition's 3,000 reads (decisions.md §11). Cached, a container reads it at most once a second.
 *
 * What a second of staleness can do: park a delivery on a breaker that has just closed (the wake the close sends takes
 * it out again), attempt freely an endpoint whose breaker another process opened, or found slow, less than a second
 * ago, or attempt one more delivery to an endpoint deleted less than a second ago. It never lets more attempts run
 * under leases than the breaker allows: a lease is taken by a write conditional on the breaker's revision, and this
 * process's own breaker writes update the cache (a lost write drops the entry, so the next look reads afresh).
 */
import type { BreakerState } from '../domain/endpoint-breaker';
import type { StoredBreaker } from './webhook-endpoints';
import { type BreakerStore, ENDPOINT_STALENESS_MS, type EndpointStore } from '../use-cases/webhook-deliveries';

const TTL_MS = ENDPOINT_STALENESS_MS;

type Found = Awaited<ReturnType<EndpointStore['getWebhookEndpointWithSecret']>>;

export function cachedEndpoints(
  endpoints: EndpointStore,
  breakers: BreakerStore,
  clock: () => number = Date.now,
): { endpoints: EndpointStore; breakers: BreakerStore } {
  const cache = new Map<string, { found: Found; readAt: number }>();
  const keyOf = (partnerId: string, endpointId: string) => `${partnerId}/${endpointId}`;
  const withBreaker = (key: string, breaker: StoredBreaker | undefined) => {
    const entry = cache.get(key);
    if (entry?.found === undefined) return;
    if (breaker === undefined) cache.delete(key);
    else cache.set(key, { found: { ...entry.found, breaker }, readAt: entry.readAt });
  };
  return {
    endpoints: {
      async getWebhookEndpointWithSecret(partnerId, endpointId) {
        const key = keyOf(partnerId, endpointId);
        const entry = cache.get(key);
        if (entry !== undefined && clock() - entry.readAt < TTL_MS) return entry.found;
        const found = await endpoints.getWebhookEndpointWithSecret(partnerId, endpointId);
        cache.set(key, { found, readAt: clock() });
        return found;
      },
    },
    breakers: {
      async getBreaker(partnerId, endpointId) {
        const breaker = await breakers.getBreaker(partnerId, endpointId);
        withBreaker(keyOf(partnerId, endpointId), breaker);
        return breaker;
      },
      async putBreaker(partnerId: string, endpointId: string, state: BreakerState, readRevision: number) {
        const written = await breakers.putBreaker(partnerId, endpointId, state, readRevision);
        withBreaker(keyOf(partnerId, endpointId), written ? { state, revision: readRevision + 1 } : undefined);
        return written;
      },
    },
  };
}
