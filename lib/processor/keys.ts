/**
 * Where the processor keys come from. Locally: environment variables (`PROCESSOR_SECRET_KEY`,
 * `PROCESSOR_PUBLISHABLE_KEY`, `PROCESSOR_WEBHOOK_SECRET`). In AWS: one Secrets Manager secret
 * (`PROCESSOR_SECRET_ARN`, a JSON object `{ "secret_key", "publishable_key", "webhook_secret" }`), so the keys
 * never sit in function configuration. It is read through the Powertools parameters cache and read again once
 * the cached value is {@link PROCESSOR_KEYS_MAX_AGE_SECONDS} old, so keys put (or rotated) after a deploy reach
 * warm containers without a redeploy.
 */
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { errors } from '../domain/errors';
import type { Processor } from '../use-cases/ports/processor';

export interface ProcessorKeys {
  secretKey: string | undefined;
  publishableKey: string | undefined;
  webhookSecret: string | undefined;
}

export type LoadProcessorKeys = () => Promise<ProcessorKeys>;

const present = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value : undefined);

export const keysFromEnvironment =
  (keys: ProcessorKeys): LoadProcessorKeys =>
  async () =>
    keys;

/** How long a read of the secret is used: the longest a warm container answers with old (or no) keys. */
const PROCESSOR_KEYS_MAX_AGE_SECONDS = 5 * 60;

/** Reads the secret at most once per {@link PROCESSOR_KEYS_MAX_AGE_SECONDS}; a failed read is not cached. */
export function keysFromSecretsManager(client: SecretsManagerClient, secretArn: string): LoadProcessorKeys {
  const secrets = new SecretsProvider({ awsSdkV3Client: client });
  return async () => {
    const secret = await secrets.get(secretArn, { maxAge: PROCESSOR_KEYS_MAX_AGE_SECONDS });
    let parsed: Record<string, unknown> | null = null;
    try {
      parsed = JSON.parse(typeof secret === 'string' ? secret : 'null') as Record<string, unknown> | null;
    } catch {
      // A secret that is not JSON holds no usable key: the service answers *_MISSING.
    }
    return { secretKey: present(parsed?.secret_key), publishableKey: present(parsed?.publishable_key), webhookSecret: present(parsed?.webhook_secret) };
  };
}

/** The processor's publishable key (`Processor.publishableKey`), read per call: 500 PROCESSOR_PUBLISHABLE_MISSING when unset. */
export const publishableKeyFrom =
  (loadKeys: LoadProcessorKeys): Processor['publishableKey'] =>
  async () => {
    const { publishableKey } = await loadKeys();
    if (publishableKey === undefined) throw errors.processorPublishableMissing();
    return publishableKey;
  };
