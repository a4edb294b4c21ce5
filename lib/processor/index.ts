/** The processor of this process: Stripe (locally, the sandbox processor behind PROCESSOR_API_BASE). */
import { config } from '../config';
import { createStripeProcessor } from './stripe';

export const processor = createStripeProcessor(config);
