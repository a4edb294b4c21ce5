/** Bounded concurrency, for work fanned out over many keys (a sharded index's partitions, a run's items). */

/** 0 … count − 1. */
export const range = (count: number): number[] => Array.from({ length: count }, (_, i) => i);

/** `work` over `items`, at most `concurrency` at once; the results in the items' order. */
export async function inPool<T, R>(items: readonly T[], concurrency: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i] as T);
    }
  };
  await Promise.all(range(Math.min(Math.max(1, concurrency), items.length)).map(worker));
  return results;
}
