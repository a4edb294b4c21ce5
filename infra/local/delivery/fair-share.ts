/**
 * The receive order of an SQS fair queue, for the local delivery queue (decisions.md §8), as AWS describes it
 * ("How Amazon SQS fair queues work"):
 *
 * - A tenant is a message's `MessageGroupId`; a message without one is a tenant of its own.
 * - A tenant is noisy when it holds more than 10 % of the messages in flight and at least 30 of them
 *   (concurrency share), or more than 10 % of the consumer's recent processing time (processing time share).
 * - Receives hand out quiet tenants' messages first. Noisy tenants' messages are never dropped nor held back
 *   when nothing else waits; among noisy tenants, the one with the fewest messages in flight goes first.
 * - A tenant stops being noisy as soon as its shares fall (here: measured afresh at every receive, over the
 *   last minute of processing).
 *
 * A message is in flight from its receive until the consumer's batch that holds it returns; its processing
 * time is that span (the consumer is busy with it the whole time, which is what a slow endpoint costs).
 */

/** AWS's thresholds (approximate there, exact here). */
export const NOISY_TENANT = {
  concurrencyShare: 0.1,
  minInFlight: 30,
  processingTimeShare: 0.1,
  /** How far back "recent processing time" looks. */
  windowMs: 60_000,
} as const;

interface Finished {
  tenant: string;
  at: number;
  ms: number;
}

export class TenantShares {
  /** Messages in flight: id → tenant and receive time. */
  private readonly inFlight = new Map<string, { tenant: string; since: number }>();
  /** Processing spans that ended within the window, oldest first. */
  private finished: Finished[] = [];

  received(messageId: string, tenant: string, now: number): void {
    this.inFlight.set(messageId, { tenant, since: now });
  }

  /** The consumer is done with the message (deleted, or left to be received again). */
  released(messageId: string, now: number): void {
    const flight = this.inFlight.get(messageId);
    if (flight === undefined) return;
    this.inFlight.delete(messageId);
    this.finished.push({ tenant: flight.tenant, at: now, ms: now - flight.since });
  }

  /** The tenants that are noisy now. */
  noisyTenants(now: number): Map<string, number> {
    const windowStart = now - NOISY_TENANT.windowMs;
    const firstRecent = this.finished.findIndex((span) => span.at >= windowStart);
    this.finished = firstRecent === -1 ? [] : this.finished.slice(firstRecent);

    const inFlight = new Map<string, number>();
    const time = new Map<string, number>();
    const add = (map: Map<string, number>, tenant: string, value: number) => map.set(tenant, (map.get(tenant) ?? 0) + value);
    for (const { tenant, since } of this.inFlight.values()) {
      add(inFlight, tenant, 1);
      add(time, tenant, now - Math.max(since, windowStart));
    }
    for (const span of this.finished) add(time, span.tenant, Math.min(span.ms, span.at - windowStart));
    const totalInFlight = this.inFlight.size;
    const totalTime = [...time.values()].reduce((sum, ms) => sum + ms, 0);

    const noisy = new Map<string, number>();
    for (const tenant of new Set([...inFlight.keys(), ...time.keys()])) {
      const flying = inFlight.get(tenant) ?? 0;
      const byConcurrency = flying > NOISY_TENANT.concurrencyShare * totalInFlight && flying >= NOISY_TENANT.minInFlight;
      const byTime = totalTime > 0 && (time.get(tenant) ?? 0) > NOISY_TENANT.processingTimeShare * totalTime;
      if (byConcurrency || byTime) noisy.set(tenant, flying);
    }
    return noisy;
  }

  /**
   * `candidates` (oldest first) in the order a receive hands them out: quiet tenants' messages first, then the
   * noisy tenants', the one with the fewest messages in flight first; each tenant's messages keep their order.
   */
  order<T>(candidates: T[], tenantOf: (candidate: T) => string, now: number): T[] {
    const noisy = this.noisyTenants(now);
    if (noisy.size === 0) return candidates;
    const rank = (candidate: T) => {
      const flying = noisy.get(tenantOf(candidate));
      return flying === undefined ? -1 : flying;
    };
    // Array.prototype.sort is stable: equal ranks keep the oldest-first order.
    return [...candidates].sort((a, b) => rank(a) - rank(b));
  }
}
