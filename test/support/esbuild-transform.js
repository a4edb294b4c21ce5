// Jest transform (configured under "jest" in package.json): TypeScript -> JavaScript with esbuild (the bundler
// the Lambdas are built with), as ES modules when jest runs them natively (--experimental-vm-modules, needed
// because middy 7 is ESM-only), CommonJS otherwise. Type checking is `tsc --noEmit`'s job (`npm run
// typecheck`), not the transform's.
//
// Why esbuild and not @swc/jest: the registry this project installs from carries only some platforms' binaries
// of @swc/core (and of jest 30's unrs-resolver), so their lockfile entries come out incomplete and `npm ci`
// refuses the lockfile. esbuild publishes every platform's binary, and already bundles the Lambdas.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { transformSync } from 'esbuild';

const esbuildVersion = JSON.parse(readFileSync(new URL('../../node_modules/esbuild/package.json', import.meta.url), 'utf8')).version;

export default {
  canInstrument: false,
  getCacheKey(source, filename, options) {
    return createHash('sha256')
      .update(esbuildVersion)
      .update(String(options.supportsStaticESM))
      .update(filename)
      .update(source)
      .digest('hex');
  },
  process(source, filename, options) {
    const result = transformSync(source, {
      loader: filename.endsWith('.ts') ? 'ts' : 'js',
      format: options.supportsStaticESM ? 'esm' : 'cjs',
      target: 'node22',
      sourcemap: 'inline',
      sourcefile: filename,
    });
    return { code: result.code };
  },
};
