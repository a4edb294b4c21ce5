/**
 * The per-partner rate limit (decisions.md §3) on split counters (lib/domain/rate-limit.ts, decisions.md §11): a
 * limit up to 15,000 a minute has one counter and the exact limit; above it, the window is split so that no counter
 * takes more than 15,000 a minute, and each request counts on one at random.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ServiceError } from '../../../lib/domain/errors';
import { rateWindowOf, REQUESTS_PER_COUNTER } from '../../../lib/domain/rate-limit';
import { rateLimit } from '../../../lib/http/access';
import type { ChainRequest } from '../../../lib/http/middlewares';
import type { Partner } from '../../../lib/domain/partner';

describe('rateWindowOf', () => {
  it('keeps one counter, and the exact limit, up to 15,000 a minute', () => {
    expect(rateWindowOf(600)).toEqual({ counters: 1, perCounter: 600 });
    expect(rateWindowOf(15_000)).toEqual({ counters: 1, perCounter: 15_000 });
    expect(rateWindowOf(15_001)).toEqual({ counters: 2, perCounter: 7_501 });
    expect(rateWindowOf(180_000)).toEqual({ counters: 12, perCounter: 15_000 });
  });

  it('splits any limit into the fewest counters of at most 15,000, whose shares add up to the limit or just past it', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), (limit) => {
        const { counters, perCounter } = rateWindowOf(limit);
        expect(perCounter).toBeLessThanOrEqual(REQUESTS_PER_COUNTER);
        expect(counters * perCounter).toBeGreaterThanOrEqual(limit);
        expect(counters * perCounter - limit).toBeLessThan(counters);
        expect(Math.ceil(limit / (counters - 1 || 1)) > REQUESTS_PER_COUNTER || counters === 1).toBe(true);
      }),
    );
  });
});

describe('the rate limit step', () => {
  /** The step for a partner allowed `limit` a minute, over an in-memory counter store. */
  function limiter(limit: number) {
    const counts = new Map<number, number>();
    const step = rateLimit({
      rateLimit: {
        now: () => Date.UTC(2026, 0, 1, 12, 0, 30),
        countRequest: async (_owner, _minute, counter) => {
          counts.set(counter, (counts.get(counter) ?? 0) + 1);
          return counts.get(counter)!;
        },
      },
      partners: { getPartner: async () => undefined } as never,
    });
    const partner = { partnerId: 'ptr_1', rateLimitPerMinute: limit } as Partner;
    const request = () => ({ context: { svc: { caller: { kind: 'partner', partner } } } }) as unknown as ChainRequest;
    const send = async () => {
      try {
        await step.before!(request());
        return 'ok';
      } catch (error) {
        return error instanceof ServiceError ? error.code : 'unexpected';
      }
    };
    return { counts, send };
  }

  it('refuses the first request past a one-counter limit', async () => {
    const { counts, send } = limiter(3);
    const answers = [await send(), await send(), await send(), await send()];
    expect(answers).toEqual(['ok', 'ok', 'ok', 'RATE_LIMITED']);
    expect([...counts.keys()]).toEqual([0]);
  });

  it('spreads a high limit over its counters: never more than the limit in a window, and nearly all of it', async () => {
    const { counts, send } = limiter(180_000);
    const answers: string[] = [];
    for (let i = 0; i < 185_000; i++) answers.push(await send());
    expect(counts.size).toBe(12);
    const accepted = answers.filter((answer) => answer === 'ok').length;
    expect(accepted).toBeLessThanOrEqual(180_000);
    expect(accepted).toBeGreaterThan(179_000);
    expect(answers.filter((answer) => answer !== 'ok' && answer !== 'RATE_LIMITED')).toEqual([]);
  }, 60_000);
});
