/**
 * `useLoad`, read again every few seconds while what it answered is still moving (a delivery still `pending`):
 * quietly, so the table stays on screen and keeps its place instead of blinking through "Loading…". A re-read
 * that fails stops the re-reading and leaves the last answer shown; the next reload reads, and shows, anew.
 */
import { type DependencyList, useEffect, useState } from 'react';
import { useLoad } from '../use-call';

const EVERY_MS = 1_500;

export function useSettlingLoad<T>(load: () => Promise<T>, deps: DependencyList, moving: (data: T) => boolean) {
  const loaded = useLoad(load, deps);
  // The latest re-read, and the answer of the load it re-reads: dropped as soon as the load itself reads again.
  const [reread, setReread] = useState<{ of: T; data: T } | undefined>();
  const base = loaded.state === 'done' ? loaded.data : undefined;
  const data = reread !== undefined && reread.of === base ? reread.data : base;
  useEffect(() => {
    if (base === undefined || data === undefined || !moving(data)) return;
    let current = true;
    const timer = setTimeout(() => {
      load().then(
        (next) => current && setReread({ of: base, data: next }),
        () => undefined,
      );
    }, EVERY_MS);
    return () => {
      current = false;
      clearTimeout(timer);
    };
    // Runs again on each answer: each one decides whether another re-read is due.
  }, [base, data]);
  return loaded.state === 'done' && data !== undefined ? { ...loaded, data } : loaded;
}
