/**
 * The service's configuration: environment variables only (decisions.md §1), parsed once with zod when
 * this module is first imported (a Lambda cold start, or `npm start`). Nothing else reads `process.env`.
 *
 * `SVC_RUNTIME` chooses the defaults: `local` (the default) fills in everything `npm start` needs on a
 * fresh machine; `aws` (set by the CDK stack on every function) has no local defaults, so a missing
 * setting fails the cold start instead of silently pointing at a sandbox.
 */
import * as z from 'zod';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

const port = z.coerce
  .number({ error: 'expected a port number' })
  .int('expected a whole port number')
  .min(1, 'expected a port number 1-65535')
  .max(65535, 'expected a port number 1-65535');

const booleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'expected true or false' })
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

/** An optional secret: unset or empty means "not configured" (the service answers with the spec's *_MISSING code). */
const optionalSecret = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? undefined : value));

/** A base URL the service calls with a bearer key: http(s) only (in AWS https only, checked in {@link loadConfig}). */
const httpBase = z.url({ protocol: /^https?$/, error: 'expected an http(s) URL' });

const percent = z.coerce.number({ error: 'expected a number' }).min(0, 'expected 0-100').max(100, 'expected 0-100');

const schema = z.object({
  SVC_RUNTIME: z.enum(['local', 'aws']),
  SERVICE_NAME: z.string().min(1),
  LOG_LEVEL: z.enum(['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'CRITICAL', 'SILENT'], {
    error: 'expected TRACE, DEBUG, INFO, WARN, ERROR, CRITICAL or SILENT',
  }),
  AWS_REGION: z.string().min(1),
  TABLE_NAME: z.string().min(3),
  /** Only for DynamoDB Local; unset in AWS. */
  DYNAMODB_ENDPOINT: z.url({ error: 'expected a URL' }).optional(),
  PORT: port,
  DYNAMODB_LOCAL_PORT: port,
  PROCESSOR_SANDBOX_PORT: port,
  RAILS_SANDBOX_PORT: port,
  /** The local webhook queue's SQS front (infra/local/delivery/queue.ts); unused in AWS. */
  WEBHOOK_QUEUE_PORT: port,
  LOCAL_DATA_DIR: z.string().min(1),
  ADMIN_JWT_SECRET: optionalSecret.refine((value) => value === undefined || value.length >= 32, 'expected at least 32 characters'),
  ADMIN_JWT_ISSUER: z.string().min(1).optional(),
  ADMIN_JWT_AUDIENCE: z.string().min(1).optional(),
  ADMIN_JWKS_URL: z.url({ error: 'expected a URL' }).optional(),
  PROCESSOR_SECRET_KEY: optionalSecret,
  PROCESSOR_PUBLISHABLE_KEY: optionalSecret,
  PROCESSOR_WEBHOOK_SECRET: optionalSecret,
  PROCESSOR_API_BASE: z.url({ error: 'expected a URL' }).optional(),
  /** AWS: the Secrets Manager secret holding the processor keys (replaces the three PROCESSOR_* keys). */
  PROCESSOR_SECRET_ARN: z.string().min(1).optional(),
  /** AWS: the Secrets Manager secret that seals paging cursors (list functions only); locally a key file. */
  CURSOR_SECRET_ARN: z.string().min(1).optional(),
  /**
   * The payout rails (docs/rails.md). Unset in AWS until configured: only the pay function calls them, so a
   * missing one answers that rail's payouts failed ("rail A is not configured") instead of failing every cold start.
   */
  RAIL_A_API_BASE: httpBase.optional(),
  RAIL_B_API_BASE: httpBase.optional(),
  RAIL_A_API_KEY: optionalSecret,
  RAIL_B_API_KEY: optionalSecret,
  /** AWS: the Secrets Manager secret holding the rail keys (replaces RAIL_A_API_KEY and RAIL_B_API_KEY). */
  RAILS_SECRET_ARN: z.string().min(1).optional(),
  PROCESSOR_FEE_PERCENT: percent,
  WEBHOOK_RETRY_BASE_MS: z.coerce.number({ error: 'expected milliseconds' }).int('expected whole milliseconds').min(1).max(3_600_000),
  /** The partner webhook delivery queue (SQS); locally the runtime's queue front. Only the relay, sweep and consumer send. */
  WEBHOOK_QUEUE_URL: z.url({ error: 'expected a URL' }).optional(),
  /** The settlement continuation queue: where a run that cannot finish in its time sends what is left. */
  SETTLEMENT_QUEUE_URL: z.url({ error: 'expected a URL' }).optional(),
  RATE_LIMIT_PER_MINUTE: z.coerce.number({ error: 'expected a number' }).int('expected a whole number').min(1).max(1_000_000),
  SETTLEMENT_CUTOFF: z.enum(['day_boundary', 'now'], { error: 'expected day_boundary or now' }),
  SETTLEMENT_SCHEDULE: z.string().trim().min(1).optional(),
  /**
   * How long a settlement run holds a group's lease without renewing it (it renews it before every 1,000 lines): a
   * run killed while building frees its group this long after, for the next run to discard what it left.
   */
  SETTLEMENT_GROUP_LEASE_SECONDS: z.coerce.number({ error: 'expected seconds' }).int('expected whole seconds').min(1).max(900),
  /** The local reconciliation timer's rate expression, or `off` (in AWS the schedule is the stack's: every 15 minutes). */
  RECONCILIATION_SCHEDULE: z.string().trim().min(1).optional(),
  /**
   * How many days a payment may wait for the processor before the reconciliation cancels its intent and abandons it
   * (Stripe never expires an intent that waits for a payment method or an action).
   */
  RECONCILIATION_GIVE_UP_DAYS: z.coerce.number({ error: 'expected days' }).int('expected whole days').min(1).max(365),
  /** The most transactions one reconciliation run asks the processor about. */
  RECONCILIATION_MAX_CHECKS: z.coerce.number({ error: 'expected a number' }).int('expected a whole number').min(1).max(10_000),
  /** Local only: the sandbox processor records its events but sends none (a test loses a payment's events). */
  PROCESSOR_SANDBOX_DROP_EVENTS: booleanFlag.optional(),
  /** Local only: a file each function's DynamoDB calls append their consumed capacity and touched partitions to (the capacity model). */
  DYNAMODB_CAPACITY_LOG: z.string().trim().min(1).optional(),
  ALLOW_INSECURE_WEBHOOK_URLS: booleanFlag,
  KMS_KEY_ID: z.string().min(1).optional(),
});

export type Config = z.infer<typeof schema>;

type Env = Record<string, string | undefined>;

/** Defaults every runtime shares: business settings whose value is the same locally and in AWS. */
const sharedDefaults: Env = {
  SERVICE_NAME: 'partner-payments',
  LOG_LEVEL: 'INFO',
  PROCESSOR_FEE_PERCENT: '2.9',
  RATE_LIMIT_PER_MINUTE: '600',
  SETTLEMENT_CUTOFF: 'day_boundary',
  SETTLEMENT_GROUP_LEASE_SECONDS: '60',
  RECONCILIATION_GIVE_UP_DAYS: '7',
  RECONCILIATION_MAX_CHECKS: '500',
  PORT: '3000',
  DYNAMODB_LOCAL_PORT: '8000',
  PROCESSOR_SANDBOX_PORT: '12111',
  RAILS_SANDBOX_PORT: '12112',
  WEBHOOK_QUEUE_PORT: '12113',
  LOCAL_DATA_DIR: '.data',
};

/** Defaults for `npm start` on a fresh machine: sandbox processor, DynamoDB Local, local admin token settings. */
function localDefaults(env: Env): Env {
  const dynamoPort = env.DYNAMODB_LOCAL_PORT ?? sharedDefaults.DYNAMODB_LOCAL_PORT;
  const processorPort = env.PROCESSOR_SANDBOX_PORT ?? sharedDefaults.PROCESSOR_SANDBOX_PORT;
  const queuePort = env.WEBHOOK_QUEUE_PORT ?? sharedDefaults.WEBHOOK_QUEUE_PORT;
  const railsPort = env.RAILS_SANDBOX_PORT ?? sharedDefaults.RAILS_SANDBOX_PORT;
  return {
    AWS_REGION: 'local',
    TABLE_NAME: 'partner-payments',
    DYNAMODB_ENDPOINT: `http://127.0.0.1:${dynamoPort}`,
    ADMIN_JWT_SECRET: 'local-admin-jwt-secret-not-for-production-use',
    // Checked locally as in AWS, so a token minted for anything else is refused here too.
    ADMIN_JWT_ISSUER: 'partner-payments-local',
    ADMIN_JWT_AUDIENCE: 'partner-payments-admin',
    PROCESSOR_SECRET_KEY: 'sk_test_sandbox_local',
    PROCESSOR_PUBLISHABLE_KEY: 'pk_test_sandbox_local',
    PROCESSOR_WEBHOOK_SECRET: 'whsec_sandbox_local',
    PROCESSOR_API_BASE: `http://127.0.0.1:${processorPort}`,
    // The sandbox rails (infra/local/sandbox/rails/index.ts), one path per rail, each with its own key.
    RAIL_A_API_BASE: `http://127.0.0.1:${railsPort}/rail-a`,
    RAIL_B_API_BASE: `http://127.0.0.1:${railsPort}/rail-b`,
    RAIL_A_API_KEY: 'rail_a_sandbox_local',
    RAIL_B_API_KEY: 'rail_b_sandbox_local',
    WEBHOOK_RETRY_BASE_MS: '1000',
    // The local queue's SQS front, in SQS's URL shape (account/queue name), so the real SQS client sends to it.
    WEBHOOK_QUEUE_URL: `http://127.0.0.1:${queuePort}/000000000000/partner-webhooks`,
    SETTLEMENT_QUEUE_URL: `http://127.0.0.1:${queuePort}/000000000000/settlement-continuations`,
    ALLOW_INSECURE_WEBHOOK_URLS: 'true',
    RECONCILIATION_SCHEDULE: 'rate(15 minutes)',
  };
}

const awsDefaults: Env = {
  WEBHOOK_RETRY_BASE_MS: '1000',
  ALLOW_INSECURE_WEBHOOK_URLS: 'false',
};

/** Every variable the configuration reads (README's configuration table). */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(schema.shape);

/**
 * Parses an environment into a {@link Config}. Pure, so tests can build variants; the service itself uses
 * {@link config}. Throws {@link ConfigError} naming every bad variable (never echoing its value, which may be
 * a secret).
 */
export function loadConfig(env: Env = process.env): Config {
  const runtime = env.SVC_RUNTIME ?? 'local';
  const defaults = runtime === 'aws' ? awsDefaults : localDefaults(env);
  const defined = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined));
  const result = schema.safeParse({ ...sharedDefaults, ...defaults, ...defined, SVC_RUNTIME: runtime });
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `  ${issue.path.join('.') || '(environment)'}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration (environment variables):\n${problems.join('\n')}`);
  }
  if (result.data.SVC_RUNTIME === 'aws') {
    const problems = [
      result.data.DYNAMODB_ENDPOINT !== undefined && '  DYNAMODB_ENDPOINT: must not be set when SVC_RUNTIME=aws',
      result.data.KMS_KEY_ID === undefined && '  KMS_KEY_ID: required when SVC_RUNTIME=aws (secrets are encrypted with KMS)',
      ...(['RAIL_A_API_BASE', 'RAIL_B_API_BASE'] as const).map(
        (name) => result.data[name]?.startsWith('https:') === false && `  ${name}: must be https when SVC_RUNTIME=aws (requests carry the rail's API key)`,
      ),
    ].filter((problem): problem is string => problem !== false);
    if (problems.length > 0) throw new ConfigError(`Invalid configuration (environment variables):\n${problems.join('\n')}`);
  }
  return result.data;
}

/** The configuration of this process, parsed once at cold start. */
export const config: Config = loadConfig();
