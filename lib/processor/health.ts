/**
 * The processor's health check. It never calls Stripe itself (a health probe every few seconds would count
 * against the account's rate limit and prove little): it checks that the keys are configured, and, where
 * `PROCESSOR_API_BASE` points the SDK somewhere else (locally, the sandbox processor), that it answers HTTP.
 */
import { config } from '../config';
import { loadProcessorKeys } from './index';
import type { LoadProcessorKeys } from './keys';

/** The check over given keys and API base (tests pass their own); {@link checkProcessor} is this process's. */
export const processorCheck =
  (options: { apiBase: string | undefined; loadKeys: LoadProcessorKeys }) =>
  async (signal: AbortSignal): Promise<void> => {
    const keys = await options.loadKeys();
    // A checkout needs both; without either it answers 500 PROCESSOR_KEY_MISSING / PROCESSOR_PUBLISHABLE_MISSING.
    if (keys.secretKey === undefined || keys.publishableKey === undefined) throw new Error('the processor secret or publishable key is not configured');
    if (options.apiBase === undefined) return;
    // Any answer, even a 404 or 401, shows the processor is up; only no answer fails.
    const response = await fetch(options.apiBase, { signal });
    await response.body?.cancel();
  };

/** The check of this process's processor (`lib/processor/index.ts`). */
export const checkProcessor = processorCheck({ apiBase: config.PROCESSOR_API_BASE, loadKeys: loadProcessorKeys });
