/**
 * Small tools the reliability suites (test/reliability/) share: concurrency, a seeded shuffle (so a failing storm
 * can be replayed with its seed), polling, and the partner's side of a 409 IDEMPOTENCY_KEY_IN_USE (retry with the
 * same key, as docs/authentication.md tells partners to).
 */
import type { ApiResponse } from '../api';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `count` calls of `make`, started at once. */
export const times = <T>(count: number, make: (index: number) => Promise<T>): Promise<T[]> =>
  Promise.all(Array.from({ length: count }, (_, index) => make(index)));

export { seededRandom } from '../seeded-random';

/** A shuffled copy (Fisher-Yates over `random`). */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

/** Polls `probe` until it returns a value. */
export async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 15_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

export const isInUse = (response: Pick<ApiResponse, 'status' | 'body'>) => response.status === 409 && response.body?.code === 'IDEMPOTENCY_KEY_IN_USE';

/**
 * What a partner does with a 409 IDEMPOTENCY_KEY_IN_USE: waits (`Retry-After` is about a second; `waitMs` here)
 * and sends the same request again, until it gets another answer. Returns every answer, the last one final.
 */
export async function retryWhileInUse(send: () => Promise<ApiResponse>, options: { waitMs?: number; timeoutMs?: number } = {}): Promise<ApiResponse[]> {
  const { waitMs = 200, timeoutMs = 30_000 } = options;
  const deadline = Date.now() + timeoutMs;
  const answers = [await send()];
  while (isInUse(answers.at(-1) as ApiResponse)) {
    if (Date.now() > deadline) throw new Error(`still 409 IDEMPOTENCY_KEY_IN_USE after ${timeoutMs} ms`);
    await sleep(waitMs);
    answers.push(await send());
  }
  return answers;
}

/** `{ "201": 3, "409 IDEMPOTENCY_KEY_IN_USE": 47 }`: a compact view of many answers for a failure message. */
export function tally(answers: ReadonlyArray<Pick<ApiResponse, 'status' | 'body'>>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const answer of answers) {
    const key = answer.status >= 400 && typeof answer.body?.code === 'string' ? `${answer.status} ${answer.body.code}` : String(answer.status);
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}
