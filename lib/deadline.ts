/**
 * The deadline of the request being served, for the calls it makes. The HTTP chain runs each handler under the
 * instant at which it cuts the handler off (the function's own deadline less the time the chain keeps to release
 * the idempotency key and answer); an adapter that calls out (the processor) bounds its call by the time left, so
 * the call fails with its own error instead of outliving the request.
 *
 * Carried in AsyncLocalStorage rather than passed down as a parameter: like the trace segment, it belongs to the
 * invocation, not to the business operation, so no use case or port signature carries a number derived from the
 * Lambda context. Outside an HTTP request (a queue consumer, a script) there is no deadline.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const deadlines = new AsyncLocalStorage<number>();

/** Runs `work` under `deadline` (epoch milliseconds). */
export function runWithDeadline<T>(deadline: number, work: () => Promise<T>): Promise<T> {
  return deadlines.run(deadline, work);
}

/** Milliseconds until the current request's deadline (negative once past); `undefined` where none applies. */
export function timeLeftMs(): number | undefined {
  const deadline = deadlines.getStore();
  return deadline === undefined ? undefined : deadline - Date.now();
}
