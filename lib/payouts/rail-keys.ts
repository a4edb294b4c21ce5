/**
 * Where the payout rails' API keys come from (the same model as the processor's, `lib/processor/keys.ts`).
 * Locally: environment variables (`RAIL_A_API_KEY`, `RAIL_B_API_KEY`; the sandbox rails' keys by default). In
 * AWS: one Secrets Manager secret (`RAILS_SECRET_ARN`, a JSON object `{ "rail_a_api_key", "rail_b_api_key" }`),
 * so the keys never sit in function configuration. It is read through the Powertools parameters cache and read
 * again once the cached value is {@link RAIL_KEYS_MAX_AGE_SECONDS} old, so keys put (or rotated) after a deploy
 * reach warm containers without a redeploy.
 */
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

/** Each rail's key; `undefined`: that rail is not configured (its payouts answer failed, nothing is sent). */
export interface RailKeys {
  railA: string | undefined;
  railB: string | undefined;
}

export type LoadRailKeys = () => Promise<RailKeys>;

const present = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value : undefined);

export const railKeysFromEnvironment =
  (keys: RailKeys): LoadRailKeys =>
  async () =>
    keys;

/** How long a read of the secret is used: the longest a warm container pays with old (or no) keys. */
const RAIL_KEYS_MAX_AGE_SECONDS = 5 * 60;

/** Reads the secret at most once per {@link RAIL_KEYS_MAX_AGE_SECONDS}; a failed read is not cached. */
export function railKeysFromSecretsManager(client: SecretsManagerClient, secretArn: string): LoadRailKeys {
  const secrets = new SecretsProvider({ awsSdkV3Client: client });
  return async () => {
    const secret = await secrets.get(secretArn, { maxAge: RAIL_KEYS_MAX_AGE_SECONDS });
    let parsed: Record<string, unknown> | null = null;
    try {
      parsed = JSON.parse(typeof secret === 'string' ? secret : 'null') as Record<string, unknown> | null;
    } catch {
      // A secret that is not JSON holds no usable key: both rails answer "not configured".
    }
    return { railA: present(parsed?.rail_a_api_key), railB: present(parsed?.rail_b_api_key) };
  };
}
