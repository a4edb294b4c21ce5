/**
 * The service's six stacks, built from the CDK context (`npx cdk synth -c key=value`; every key in
 * docs/deploy.md): the app (`app.ts`) and the infra tests build the same thing.
 */
import { Annotations, type App } from 'aws-cdk-lib';
import { CONSOLE_DIST } from '../shared/console-build';
import { ApiStack } from './api-stack';
import { ConsoleStack } from './console-stack';
import { DeliveryStack } from './delivery-stack';
import {
  adminAuthSettings,
  alarmEmailSetting,
  apiThrottleSettings,
  consoleOidcSettings,
  missingAdminAuthSettings,
  processorWebhookConcurrencySetting,
  railSettings,
  settlementSettings,
  stageSetting,
} from './deploy-settings';
import { ReconciliationStack } from './reconciliation-stack';
import { SettlementStack } from './settlement-stack';
import { StatefulStack } from './stateful-stack';

export interface ServiceStacks {
  stateful: StatefulStack;
  api: ApiStack;
  delivery: DeliveryStack;
  settlement: SettlementStack;
  reconciliation: ReconciliationStack;
  console: ConsoleStack;
}

export interface ServiceStacksOptions {
  /** The built admin console the console stack deploys; `console/dist` unless a test gives its own. */
  consoleDist?: string;
}

/**
 * Adds `PartnerPayments-Stateful`, `-Api`, `-Delivery`, `-Settlement`, `-Reconciliation` and `-Console` to `app`, warning about unset
 * settings. Throws on a bad setting, in `prod` on missing admin token settings (`deploy-settings.ts`), and when
 * the console is not built (`app.ts` builds it first).
 */
export function addServiceStacks(app: App, options: ServiceStacksOptions = {}): ServiceStacks {
  const env = { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION };
  const stage = stageSetting(app);
  const stateful = new StatefulStack(app, 'PartnerPayments-Stateful', { env, stage, alarmEmail: alarmEmailSetting(app) });
  /** Admin token issuer: `npx cdk deploy -c adminJwksUrl=... -c adminJwtIssuer=... -c adminJwtAudience=...` (required in prod). */
  const adminAuth = adminAuthSettings(app, stage);
  /** Rails and settlement: `-c railAApiBase=https://... -c settlementSchedule='rate(6 hours)' ...` (checked here, see deploy-settings.ts). */
  const rails = railSettings(app);
  const settlement = settlementSettings(app);
  const api = new ApiStack(app, 'PartnerPayments-Api', {
    env,
    table: stateful.table,
    secretsKey: stateful.secretsKey,
    processorSecret: stateful.processorSecret,
    cursorSecret: stateful.cursorSecret,
    railsSecret: stateful.railsSecret,
    rails,
    settlementQueue: stateful.settlementQueue,
    settlementCutoff: settlement.cutoff,
    adminAuth,
    throttle: apiThrottleSettings(app),
    processorWebhookConcurrency: processorWebhookConcurrencySetting(app),
    alarmTopic: stateful.alarmTopic,
  });
  const delivery = new DeliveryStack(app, 'PartnerPayments-Delivery', {
    env,
    table: stateful.table,
    secretsKey: stateful.secretsKey,
    deliveryQueue: stateful.deliveryQueue,
    deliveryDeadLetters: stateful.deliveryDeadLetters,
    alarmTopic: stateful.alarmTopic,
  });
  const settlementStack = new SettlementStack(app, 'PartnerPayments-Settlement', {
    env,
    table: stateful.table,
    secretsKey: stateful.secretsKey,
    settlement,
    settlementQueue: stateful.settlementQueue,
    settlementDeadLetters: stateful.settlementDeadLetters,
    alarmTopic: stateful.alarmTopic,
  });
  const reconciliation = new ReconciliationStack(app, 'PartnerPayments-Reconciliation', {
    env,
    table: stateful.table,
    secretsKey: stateful.secretsKey,
    processorSecret: stateful.processorSecret,
    alarmTopic: stateful.alarmTopic,
  });
  /** The admin console and the API behind one CloudFront distribution: `-c consoleOidcIssuer=... -c consoleOidcClientId=...` for OpenID sign-in. */
  const consoleOidc = consoleOidcSettings(app);
  const consoleStack = new ConsoleStack(app, 'PartnerPayments-Console', {
    env,
    stage,
    api: api.api,
    consoleDist: options.consoleDist ?? CONSOLE_DIST,
    oidc: consoleOidc,
  });
  if (consoleOidc !== undefined && adminAuth !== undefined && consoleOidc.issuer !== adminAuth.issuer) {
    Annotations.of(consoleStack).addWarningV2(
      'partner-payments:console-issuer',
      `The console signs in at ${consoleOidc.issuer} (consoleOidcIssuer) but the admin API accepts tokens of ${adminAuth.issuer} (adminJwtIssuer): the console's tokens will be refused unless that is intended.`,
    );
  }
  if (adminAuth === undefined) {
    Annotations.of(api).addWarningV2(
      'partner-payments:admin-auth',
      `Admin auth is not configured (context ${missingAdminAuthSettings(app).join(', ')} missing; all three of adminJwksUrl, adminJwtIssuer, adminJwtAudience are needed): admin routes will refuse to start. Stage prod refuses to synthesise without them.`,
    );
  }
  if (rails.railAApiBase === undefined || rails.railBApiBase === undefined) {
    Annotations.of(api).addWarningV2(
      'partner-payments:rails',
      'A payout rail is not configured (context railAApiBase, railBApiBase): payouts over it will answer failed ("rail A is not configured").',
    );
  }
  return { stateful, api, delivery, settlement: settlementStack, reconciliation, console: consoleStack };
}
