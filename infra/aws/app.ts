/**
 * The CDK app: `npx cdk synth -c stage=dev` (offline; functions bundled by the local esbuild) or `npx cdk deploy --all -c stage=prod`
 * (the stage is required: `deploy-settings.ts`).
 * The stacks and the context they read: `service-stacks.ts`, docs/deploy.md.
 *
 * The console stack deploys the built admin console (`console/dist`): it is built first, with Vite, when missing
 * or older than a file under `console/` (as `npm start` does). Progress goes to stderr, the CLI's stdout being the
 * template's.
 */
import { App } from 'aws-cdk-lib';
import { ensureConsoleBuilt } from '../shared/console-build';
import { addServiceStacks } from './service-stacks';

await ensureConsoleBuilt((line) => process.stderr.write(line));
const app = new App();
addServiceStacks(app);
app.synth();
