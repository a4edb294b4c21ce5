/**
 * The CDK app: `npx cdk synth` (offline; functions bundled by the local esbuild) or `npx cdk deploy --all`.
 */
import { App } from 'aws-cdk-lib';
import { ApiStack } from './api-stack';
import { StatefulStack } from './stateful-stack';

const app = new App();
const env = { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION };
const stateful = new StatefulStack(app, 'PartnerPayments-Stateful', { env });
new ApiStack(app, 'PartnerPayments-Api', { env, table: stateful.table });
app.synth();
