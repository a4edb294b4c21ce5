/**
 * The CDK app: `npx cdk synth` (offline; functions bundled by the local esbuild) or `npx cdk deploy --all`.
 */
import { Annotations, App } from 'aws-cdk-lib';
import { ApiStack } from './api-stack';
import { DeliveryStack } from './delivery-stack';
import { StatefulStack } from './stateful-stack';

const app = new App();
const env = { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION };
const stateful = new StatefulStack(app, 'PartnerPayments-Stateful', { env });
/** Admin token issuer: `npx cdk deploy -c adminJwksUrl=... -c adminJwtIssuer=... -c adminJwtAudience=...`. */
const jwksUrl = app.node.tryGetContext('adminJwksUrl') as string | undefined;
const issuer = app.node.tryGetContext('adminJwtIssuer') as string | undefined;
const audience = app.node.tryGetContext('adminJwtAudience') as string | undefined;
const adminAuth = jwksUrl && issuer && audience ? { jwksUrl, issuer, audience } : undefined;
const api = new ApiStack(app, 'PartnerPayments-Api', { env, table: stateful.table, secretsKey: stateful.secretsKey, processorSecret: stateful.processorSecret, cursorSecret: stateful.cursorSecret, adminAuth });
new DeliveryStack(app, 'PartnerPayments-Delivery', {
  env,
  table: stateful.table,
  secretsKey: stateful.secretsKey,
  deliveryQueue: stateful.deliveryQueue,
  deliveryDeadLetters: stateful.deliveryDeadLetters,
});
if (adminAuth === undefined) {
  Annotations.of(api).addWarningV2(
    'partner-payments:admin-auth',
    'Admin auth is not configured (context adminJwksUrl, adminJwtIssuer, adminJwtAudience): admin routes will refuse to start.',
  );
}
app.synth();
