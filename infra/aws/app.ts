/**
 * The CDK app: `npx cdk synth` (offline; functions bundled by the local esbuild) or `npx cdk deploy --all`.
 * The stacks and the context they read: `service-stacks.ts`, docs/deploy.md.
 */
import { App } from 'aws-cdk-lib';
import { addServiceStacks } from './service-stacks';

const app = new App();
addServiceStacks(app);
app.synth();
