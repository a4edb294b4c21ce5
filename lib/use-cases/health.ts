/** GET /health's question: does every dependency a request needs answer right now? */
import { logger } from '../observability';

/**
 * One dependency's probe: resolves when the dependency answers, rejects when it does not. It is given a
 * signal that aborts at the timeout, to stop waiting on a dependency that hangs.
 */
export type HealthCheck = (signal: AbortSignal) => Promise<void>;

export type CheckResult = 'ok' | 'fail';

export interface HealthReport<Name extends string> {
  status: 'ok' | 'unavailable';
  checks: Record<Name, CheckResult>;
}

/** Long enough for a warm DynamoDB call, short enough for a load balancer's probe (and for a person waiting). */
const HEALTH_CHECK_TIMEOUT_MS = 1_500;

/**
 * Runs every check at once, each bounded by `timeoutMs` (a dependency that hangs counts as failed), and
 * reports each by name: `ok` only when all pass. A failure's cause goes to the log, never to the caller.
 */
export async function checkHealth<Name extends string>(
  checks: Record<Name, HealthCheck>,
  options: { timeoutMs: number } = { timeoutMs: HEALTH_CHECK_TIMEOUT_MS },
): Promise<HealthReport<Name>> {
  const names = Object.keys(checks) as Name[];
  const results = await Promise.all(names.map((name) => runCheck(name, checks[name], options.timeoutMs)));
  const report = Object.fromEntries(names.map((name, i) => [name, results[i]])) as Record<Name, CheckResult>;
  return { status: results.every((result) => result === 'ok') ? 'ok' : 'unavailable', checks: report };
}

async function runCheck(name: string, check: HealthCheck, timeoutMs: number): Promise<CheckResult> {
  const signal = AbortSignal.timeout(timeoutMs);
  const timedOut = new Promise<never>((_, reject) =>
    signal.addEventListener('abort', () => reject(new Error(`no answer within ${timeoutMs} ms`)), { once: true }),
  );
  try {
    await Promise.race([check(signal), timedOut]);
    return 'ok';
  } catch (error) {
    logger.warn('Health check failed', { check: name, error: error instanceof Error ? error.message : String(error) });
    return 'fail';
  }
}
