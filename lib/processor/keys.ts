/**
 * Where the processor keys come from. Locally: environment variables (`PROCESSOR_SECRET_KEY`,
 * `PROCESSOR_PUBLISHABLE_KEY`, `PROCESSOR_WEBHOOK_SECRET`). In AWS: one Secrets Manager secret
 * (`PROCESSOR_SECRET_ARN`, a JSON object `{ "secret_key", "publishable_key", "webhook_secret" }`), read on
 * first use and kept for the life of the Lambda container, so the keys never sit in function configuration.
 */
import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

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

/** Reads the secret once; a failed read is not cached, so the next request tries again. */
export function keysFromSecretsManager(client: Pick<SecretsManagerClient, 'send'>, secretArn: string): LoadProcessorKeys {
  let loading: Promise<ProcessorKeys> | undefined;
  return () => {
    loading ??= client.send(new GetSecretValueCommand({ SecretId: secretArn })).then(
      (result) => {
        let parsed: Record<string, unknown> = {};
        try {
          parsed = JSON.parse(result.SecretString ?? '{}') as Record<string, unknown>;
        } catch {
          // A secret that is not JSON holds no usable key: the service answers *_MISSING.
        }
        return { secretKey: present(parsed.secret_key), publishableKey: present(parsed.publishable_key), webhookSecret: present(parsed.webhook_secret) };
      },
      (error: unknown) => {
        loading = undefined;
        throw error;
      },
    );
    return loading;
  };
}
