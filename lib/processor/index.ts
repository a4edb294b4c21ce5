/**
 * The processor of this process: Stripe (locally, the sandbox processor behind PROCESSOR_API_BASE), with its
 * keys from Secrets Manager in AWS (`PROCESSOR_SECRET_ARN`) or from the environment locally.
 */
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { config } from '../config';
import { keysFromEnvironment, keysFromSecretsManager } from './keys';
import { createStripeProcessor } from './stripe';

export const loadProcessorKeys =
  config.PROCESSOR_SECRET_ARN === undefined
    ? keysFromEnvironment({
        secretKey: config.PROCESSOR_SECRET_KEY,
        publishableKey: config.PROCESSOR_PUBLISHABLE_KEY,
        webhookSecret: config.PROCESSOR_WEBHOOK_SECRET,
      })
    : keysFromSecretsManager(new SecretsManagerClient({ region: config.AWS_REGION }), config.PROCESSOR_SECRET_ARN);

export const processor = createStripeProcessor({ apiBase: config.PROCESSOR_API_BASE, loadKeys: loadProcessorKeys });
