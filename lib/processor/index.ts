/**
 * The processor of this process: Stripe (locally, the sandbox processor behind PROCESSOR_API_BASE), with its
 * keys from Secrets Manager in AWS (`PROCESSOR_SECRET_ARN`) or from the environment locally (`process-keys.ts`).
 */
import { config } from '../config';
import { loadProcessorKeys } from './process-keys';
import { createStripeProcessor } from './stripe';

export { loadProcessorKeys };

export const processor = createStripeProcessor({ apiBase: config.PROCESSOR_API_BASE, loadKeys: loadProcessorKeys });
