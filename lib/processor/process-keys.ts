/**
 * The processor keys of this process: from Secrets Manager in AWS (`PROCESSOR_SECRET_ARN`), else from the
 * environment. Apart from `index.ts` (the Stripe processor) so that what needs only the keys (the health check,
 * the branding packet's publishable key) does not bundle the Stripe SDK.
 */
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { config } from '../config';
import { traced } from '../observability';
import { keysFromEnvironment, keysFromSecretsManager } from './keys';

export const loadProcessorKeys =
  config.PROCESSOR_SECRET_ARN === undefined
    ? keysFromEnvironment({
        secretKey: config.PROCESSOR_SECRET_KEY,
        publishableKey: config.PROCESSOR_PUBLISHABLE_KEY,
        webhookSecret: config.PROCESSOR_WEBHOOK_SECRET,
      })
    : keysFromSecretsManager(traced(new SecretsManagerClient({ region: config.AWS_REGION })), config.PROCESSOR_SECRET_ARN);
