/**
 * The payout rails of this process, over HTTP (docs/rails.md): at `RAIL_A_API_BASE` and `RAIL_B_API_BASE` (locally
 * the sandbox rails), with their keys from Secrets Manager in AWS (`RAILS_SECRET_ARN`) or from the environment
 * locally. A rail without base URL or key answers its payouts failed ("rail A is not configured").
 */
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { config } from '../config';
import { traced } from '../observability';
import { createHttpRails } from './http-rails';
import { railKeysFromEnvironment, railKeysFromSecretsManager } from './rail-keys';

export const loadRailKeys =
  config.RAILS_SECRET_ARN === undefined
    ? railKeysFromEnvironment({ railA: config.RAIL_A_API_KEY, railB: config.RAIL_B_API_KEY })
    : railKeysFromSecretsManager(traced(new SecretsManagerClient({ region: config.AWS_REGION })), config.RAILS_SECRET_ARN);

export const rails = createHttpRails({ railABase: config.RAIL_A_API_BASE, railBBase: config.RAIL_B_API_BASE, loadKeys: loadRailKeys });
