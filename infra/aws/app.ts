/**
 * The CDK app: `npx cdk synth -c stage=dev` (offline; functions bundled by the local esbuild) or `npx cdk deploy --all -c stage=prod`
 * (the stage is required: `deploy-settings.ts`).
 * The stacks and the context they read: `service-stacks.ts`, docs/deploy.md.
 */
import { App } from 'aws-cdk-lib';
import { addServiceStacks } from './service-stacks';

const app = new App();
addServiceStacks(app);
app.synth();
