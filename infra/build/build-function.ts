/**
 * `node --import tsx infra/build/build-function.ts <name> <outDir>`: bundles `functions/<name>.ts` into `outDir`
 * (`index.mjs` and `index.mjs.map`) with `bundling.ts`'s options, Stripe trimmed, the same bytes whatever `outDir`
 * is. The CDK app runs it for each function's asset (`infra/aws/service-function.ts`), which it hashes by that output:
 * the esbuild CLI cannot run plugins, the JS API can.
 */
import { buildFunction } from './bundling';

const [name, outDir] = process.argv.slice(2);
if (name === undefined || outDir === undefined) {
  console.error('usage: node --import tsx infra/build/build-function.ts <function name> <output directory>');
  process.exit(2);
}
// esbuild has printed what failed (its log level is `warning`): only the exit status is left to give.
await buildFunction(name, outDir).catch(() => {
  process.exitCode = 1;
});
