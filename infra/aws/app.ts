/**
 * The CDK app: `npx cdk synth` (offline; functions bundled by the local esbuild) or `npx cdk deploy --all`.
 */
import { Annotations, App } from 'aws-cdk-lib';
import { ApiStack } from './api-stack';
import { DeliveryStack } from './delivery-stack';
import { railSettings, settlementSettings } from './deploy-settings';
import { SettlementStack } from './settlement-stack';
import { StatefulStack } from './stateful-stack';

const app = new App();
const env = { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION };
const stateful = new StatefulStack(app, 'PartnerPayments-Stateful', { env });
/** Admin token issuer: `npx cdk deploy -c adminJwksUrl=... -c adminJwtIssuer=... -c adminJwtAudience=...`. */
const jwksUrl = app.node.tryGetContext('adminJwksUrl') as string | undefined;
const issuer = app.node.tryGetContext('adminJwtIssuer') as string | undefined;
const audience = app.node.tryGetContext('adminJwtAudience') as string | undefined;
const adminAuth = jwksUrl && issuer && audience ? { jwksUrl, issuer, audience } : undefined;
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
  settlementCutoff: settlement.cutoff,
  adminAuth,
});
new DeliveryStack(app, 'PartnerPayments-Delivery', {
  env,
  table: stateful.table,
  secretsKey: stateful.secretsKey,
  deliveryQueue: stateful.deliveryQueue,
  deliveryDeadLetters: stateful.deliveryDeadLetters,
});
new SettlementStack(app, 'PartnerPayments-Settlement', { env, table: stateful.table, secretsKey: stateful.secretsKey, settlement });
if (adminAuth === undefined) {
  Annotations.of(api).addWarningV2(
    'partner-payments:admin-auth',
    'Admin auth is not configured (context adminJwksUrl, adminJwtIssuer, adminJwtAudience): admin routes will refuse to start.',
  );
}
if (rails.railAApiBase === undefined || rails.railBApiBase === undefined) {
  Annotations.of(api).addWarningV2(
    'partner-payments:rails',
    'A payout rail is not configured (context railAApiBase, railBApiBase): payouts over it will answer failed ("rail A is not configured").',
  );
}
app.synth();
