/**
 * The two ways a section calls the API: `useLoad` reads on mount (and on `reload`), `useAction` runs a change on
 * a click. Both keep the state every call shows: under way, failed (the API's error), or done.
 */
import { type DependencyList, useCallback, useEffect, useState } from 'react';
import { ApiError } from './api';

export type Load<T> =
  | { state: 'loading' }
  | { state: 'failed'; error: ApiError }
  | { state: 'done'; data: T };

const asApiError = (error: unknown) => (error instanceof ApiError ? error : new ApiError(0, 'CONSOLE_ERROR', error instanceof Error ? error.message : String(error)));

export function useLoad<T>(load: () => Promise<T>, deps: DependencyList): Load<T> & { reload: () => void } {
  const [result, setResult] = useState<Load<T>>({ state: 'loading' });
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    let current = true;
    setResult({ state: 'loading' });
    load().then(
      (data) => current && setResult({ state: 'done', data }),
      (error: unknown) => current && setResult({ state: 'failed', error: asApiError(error) }),
    );
    return () => {
      current = false;
    };
    // The caller names what the load depends on; `generation` counts the reloads asked for.
  }, [...deps, generation]);
  const reload = useCallback(() => setGeneration((value) => value + 1), []);
  return { ...result, reload };
}

export function useAction() {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<ApiError | undefined>();
  const run = useCallback(async <T,>(action: () => Promise<T>): Promise<T | undefined> => {
    setPending(true);
    setError(undefined);
    try {
      return await action();
    } catch (caught) {
      setError(asApiError(caught));
      return undefined;
    } finally {
      setPending(false);
    }
  }, []);
  return { pending, error, run };
}
