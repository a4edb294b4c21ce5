/**
 * `npm start`: the whole service on this machine (decisions.md §1). Starts DynamoDB Local (data in
 * `.data/dynamodb`, or `--in-memory`), creates the table, serves the HTTP API on PORT and runs the sandbox
 * processor on PROCESSOR_SANDBOX_PORT and the sandbox payout rails on RAILS_SANDBOX_PORT (state in
 * `.data/processor-sandbox` and `.data/rails-sandbox`), delivers partner webhooks (the local queue's SQS front on
 * WEBHOOK_QUEUE_PORT, fed from the table's stream and the outbox sweep), runs the reconciliation with the processor
 * on a timer (RECONCILIATION_SCHEDULE, every 15 minutes unless `off`), and, when SETTLEMENT_SCHEDULE is set, runs
 * the scheduled settlement on a timer. `/sandbox/checkout` is a partner's checkout page on the example
 * partner backend, run in a process of its own from the first visit, with a sandbox partner made then
 * (`../sandbox/checkout/`).
 * Ctrl-C (SIGINT), SIGTERM or SIGHUP (the terminal closed, the SSH session dropped) stops accepting requests,
 * answers the ones already running (up to 10 s), lets a running webhook batch finish, then stops everything,
 * DynamoDB Local's Java process included.
 * If DynamoDB Local dies meanwhile it is restarted; if it cannot be, the service stops (exit code 1) rather
 * than answer 500 to every request.
 */
import { join } from 'node:path';
import { issueLocalAdminToken } from '../../../lib/auth/admin-token';
import { config } from '../../../lib/config';
import { ensureConsoleBuilt } from '../../shared/console-build';
import { SANDBOX_RAIL_KEYS } from '../sandbox/rails';
import { startLocalRuntime } from './runtime';

const SANDBOX_SECRET_KEY = 'sk_test_sandbox_local';
/** `PROCESSOR_PUBLISHABLE_KEY`'s local default (lib/config.ts): what the checkout page's Stripe.js is given. */
const SANDBOX_PUBLISHABLE_KEY = 'pk_test_sandbox_local';
const SANDBOX_WEBHOOK_SECRET = 'whsec_sandbox_local';

const inMemory = process.argv.includes('--in-memory');

async function main(): Promise<void> {
  await ensureConsoleBuilt();
  const runtime = await startLocalRuntime({
    httpPort: config.PORT,
    dynamoPort: config.DYNAMODB_LOCAL_PORT,
    dataDir: inMemory ? undefined : join(config.LOCAL_DATA_DIR, 'dynamodb'),
    tableName: config.TABLE_NAME,
    processor: {
      port: config.PROCESSOR_SANDBOX_PORT,
      // The sandbox needs keys even when the service is run without them (to show PROCESSOR_KEY_MISSING).
      secretKey: config.PROCESSOR_SECRET_KEY ?? SANDBOX_SECRET_KEY,
      publishableKey: config.PROCESSOR_PUBLISHABLE_KEY ?? SANDBOX_PUBLISHABLE_KEY,
      webhookSecret: config.PROCESSOR_WEBHOOK_SECRET ?? SANDBOX_WEBHOOK_SECRET,
      // Beside DynamoDB's data, so a restart finds the intents the transactions there point to.
      stateDir: inMemory ? undefined : join(config.LOCAL_DATA_DIR, 'processor-sandbox'),
      dropEvents: config.PROCESSOR_SANDBOX_DROP_EVENTS,
    },
    rails: {
      port: config.RAILS_SANDBOX_PORT,
      // As for the processor: the sandbox needs keys even when the service runs without them ("not configured").
      keys: { railA: config.RAIL_A_API_KEY ?? SANDBOX_RAIL_KEYS.railA, railB: config.RAIL_B_API_KEY ?? SANDBOX_RAIL_KEYS.railB },
      // Never forget a paid idempotency key across restarts: that would pay a retried batch twice.
      stateDir: inMemory ? undefined : join(config.LOCAL_DATA_DIR, 'rails-sandbox'),
    },
    settlementSchedule: config.SETTLEMENT_SCHEDULE,
    reconciliationSchedule: config.RECONCILIATION_SCHEDULE,
    webhookQueue: { port: config.WEBHOOK_QUEUE_PORT },
    // Its partner is made on the first visit, with a token of the local admin secret.
    sandboxCheckout: {
      adminToken: () => issueLocalAdminToken(config),
      stateDir: inMemory ? undefined : join(config.LOCAL_DATA_DIR, 'sandbox-checkout'),
    },
  });
  let stopping = false;
  /** Stops once, whatever asks first (a signal, or a part that died for good); `announce` says why. */
  const stop = (exitCode: number, announce: () => void) => {
    if (stopping) return;
    stopping = true;
    announce();
    runtime
      .stop()
      .then(() => {
        console.log('Stopped.');
        process.exit(exitCode);
      })
      .catch((error: unknown) => {
        console.error('Stopping failed:', error);
        process.exit(1);
      });
  };
  // SIGHUP too: DynamoDB Local's Java is in a process group of its own, so a hangup that killed node would leave it.
  // After a hangup the terminal is gone: a write to it fails (EIO), and must not end the graceful stop early.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => stop(0, () => console.log(`\n${signal} received: stopping (requests already running are answered first)...`)));
  }
  void runtime.failed.then((error) => stop(1, () => console.error(`${error.message}\nStopping the service. Start it again with \`npm start\`.`)));

  console.log(
    [
      'Partner payments service is running locally.',
      `  HTTP API           ${runtime.apiUrl}/api/v1   (health: ${runtime.apiUrl}/api/v1/health)`,
      `  API reference      ${runtime.apiUrl}/api/v1/docs   (OpenAPI 3.1: ${runtime.apiUrl}/api/v1/openapi.json)`,
      `  Admin console      ${runtime.apiUrl}/admin   (sign in with the admin token below)`,
      `  Sandbox checkout   ${runtime.apiUrl}/sandbox/checkout   (a partner's checkout page; card 4242 4242 4242 4242 pays, 4000 0000 0000 0002 is declined)`,
      `  Sandbox processor  ${runtime.processorUrl}   (Stripe API subset, Stripe.js stand-in at /v3/; test cards pm_card_visa, pm_card_chargeDeclined${config.PROCESSOR_SANDBOX_DROP_EVENTS === true ? '; DROPPING its events' : ''})`,
      `  Sandbox rails      ${runtime.railsUrl}   (rail-a, rail-b; POST /rail-a/fail-next, GET /rail-a/transfers)`,
      `  Settlement timer   ${runtime.settlementIntervalMs === undefined ? 'off (set SETTLEMENT_SCHEDULE, e.g. rate(5 minutes))' : `${config.SETTLEMENT_SCHEDULE}`}`,
      `  Reconciliation     ${runtime.reconciliationIntervalMs === undefined ? 'off (RECONCILIATION_SCHEDULE=off)' : `${config.RECONCILIATION_SCHEDULE}, payments waiting ${config.RECONCILIATION_GIVE_UP_DAYS} days or more given up`}`,
      `  Webhook queue      ${runtime.webhookQueueUrl}   (SQS SendMessage; dead letters: GET ${new URL(runtime.webhookQueueUrl).origin}/dead-letters)`,
      `  Settlement queue   ${config.SETTLEMENT_QUEUE_URL ?? '(none)'}   (a settlement run that cannot finish in its time goes on from here)`,
      `  DynamoDB Local     ${runtime.dynamoEndpoint}   table "${config.TABLE_NAME}", ${inMemory ? 'in memory' : `data in ${join(config.LOCAL_DATA_DIR, 'dynamodb')}`}`,
      '',
      'Admin token (12 h; `npm run admin-token` prints a fresh one):',
      `  ${await issueLocalAdminToken(config)}`,
      '',
      'Press Ctrl-C to stop.',
    ].join('\n'),
  );
}

main().catch((error: unknown) => {
  console.error(`Could not start the service: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
