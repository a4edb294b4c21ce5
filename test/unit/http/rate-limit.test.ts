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
  const shares = (limit: number) => {
    const window = rateWindowOf(limit);
    return Array.from({ length: window.counters }, (_, counter) => window.shareOf(counter));
  };

  it('keeps one counter, and the exact limit, up to 15,000 a minute', () => {
    expect(shares(600)).toEqual([600]);
    expect(shares(15_000)).toEqual([15_000]);
    expect(shares(15_001)).toEqual([7_501, 7_500]);
    expect(shares(180_000)).toEqual(Array.from({ length: 12 }, () => 15_000));
  });

  it('splits any limit into the fewest counters of at most 15,000 whose shares add up to the limit exactly', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), (limit) => {
        const split = shares(limit);
        expect(split.every((share) => share <= REQUESTS_PER_COUNTER && share >= 1)).toBe(true);
        expect(split.reduce((sum, share) => sum + share, 0)).toBe(limit);
        expect(split.length === 1 || Math.ceil(limit / (split.length - 1)) > REQUESTS_PER_COUNTER).toBe(true);
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

  it('never lets an odd limit through by more: 15,001 a minute over two counters of 7,501 and 7,500', async () => {
    const { send } = limiter(15_001);
    let accepted = 0;
    for (let i = 0; i < 16_000; i++) if ((await send()) === 'ok') accepted += 1;
    expect(accepted).toBe(15_001);
  }, 60_000);

  it('refuses the first request past a one-counter limit', async () => {
    const { counts, send } = limiter(3);
    const answers = [await send(), await send(), await send(), await send()];
    expect(answers).toEqual(['ok', 'ok', 'ok', 'RATE_LIMITED']);
    expect([...counts.keys()]).toEqual([0]);
  });

  it('spreads a high limit over its counters: the limit exactly, never more, once every counter is full', async () => {
    const { counts, send } = limiter(180_000);
    const answers: string[] = [];
    for (let i = 0; i < 185_000; i++) answers.push(await send());
    expect(counts.size).toBe(12);
    const accepted = answers.filter((answer) => answer === 'ok').length;
    expect(accepted).toBe(180_000);
    expect(answers.filter((answer) => answer !== 'ok' && answer !== 'RATE_LIMITED')).toEqual([]);
  }, 60_000);
});
