/**
 * `node --import tsx infra/build/build-all-functions.ts <outRoot>`: bundles every `functions/<name>.ts` into
 * `<outRoot>/<name>/` with `bundling.ts`'s options, a few at once: the infra tests build them once per run this
 * way (test/infra/global-setup.ts) instead of once per synth.
 */
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { buildFunction, PROJECT_ROOT } from './bundling';

const CONCURRENCY = 4;

const [outRoot] = process.argv.slice(2);
if (outRoot === undefined) {
  console.error('usage: node --import tsx infra/build/build-all-functions.ts <output root>');
  process.exit(2);
}
const names = readdirSync(join(PROJECT_ROOT, 'functions')).filter((name) => name.endsWith('.ts')).map((name) => name.slice(0, -3));
try {
  for (let start = 0; start < names.length; start += CONCURRENCY) {
    await Promise.all(
      names.slice(start, start + CONCURRENCY).map((name) => {
        mkdirSync(join(outRoot, name), { recursive: true });
        return buildFunction(name, join(outRoot, name));
      }),
    );
  }
} catch {
  // esbuild has printed what failed (its log level is `warning`): only the exit status is left to give.
  process.exitCode = 1;
}
