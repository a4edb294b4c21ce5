/**
 * The processor's health check: the processor's API answers HTTP (locally the sandbox processor behind
 * `PROCESSOR_API_BASE`; in AWS Stripe's API host, unauthenticated, which costs the account nothing), and, where
 * the keys come from the environment (locally), both keys are configured. In AWS the public health function
 * reads no secret (least privilege): keys missing there show on the first checkout as 500
 * PROCESSOR_KEY_MISSING / PROCESSOR_PUBLISHABLE_MISSING.
 */
import { config } from '../config';
import { loadProcessorKeys } from './process-keys';
import type { LoadProcessorKeys } from './keys';

/** Where the stripe SDK sends requests when no API base is configured. */
const STRIPE_API_BASE = 'https://api.stripe.com';

/** The check over a given API base and, where the keys are at hand, their loader (tests pass their own). */
export const processorCheck =
  (options: { apiBase: string; loadKeys?: LoadProcessorKeys | undefined }) =>
  async (signal: AbortSignal): Promise<void> => {
    if (options.loadKeys !== undefined) {
      const keys = await options.loadKeys();
      // A checkout needs both; without either it answers 500 PROCESSOR_KEY_MISSING / PROCESSOR_PUBLISHABLE_MISSING.
      if (keys.secretKey === undefined || keys.publishableKey === undefined) throw new Error('the processor secret or publishable key is not configured');
    }
    // Any answer, even a 404 or 401, shows the processor is up; only no answer fails.
    const response = await fetch(options.apiBase, { method: 'HEAD', signal });
    await response.body?.cancel();
  };

/** The check of this process's processor (`lib/processor/index.ts`; only its keys are read here, so no Stripe SDK). */
export const checkProcessor = processorCheck({
  apiBase: config.PROCESSOR_API_BASE ?? STRIPE_API_BASE,
  loadKeys: config.SVC_RUNTIME === 'aws' ? undefined : loadProcessorKeys,
});
