/**
 * How every `functions/<name>.ts` is bundled, defined once: the CDK stacks (`infra/aws/service-function.ts`, which runs
 * `build-function.ts` for each function), `npm run bundle-report` and the tests of the bundles all build with
 * {@link esbuildOptions}, so the sizes the report prints are the sizes that deploy and the code the tests run is
 * the code that deploys.
 *
 * Stripe's core only: the `stripe` SDK constructs every one of its ~200 API resource classes in its constructor,
 * so esbuild cannot drop any of them (about 160 KB of every function that talks to the processor). The
 * {@link trimStripe} plugin replaces each module under `stripe/esm/resources/` that {@link STRIPE_RESOURCES} does
 * not name with a stub exporting the same names; a stubbed resource is still constructed, but using it in any way
 * (`stripe.accounts.list`, `'x' in stripe.customers`) throws "Stripe resource Accounts is not bundled in this
 * function: add it to STRIPE_RESOURCES in infra/build/bundling.ts". To call another resource, add its name there (its
 * path under `node_modules/stripe/esm/resources/` without `.js`, e.g. `Refunds`, `Issuing/Cards`).
 *
 * The same code gives the same bytes wherever it is built: the CDK hashes each function's asset by its output
 * (`assetHashType: OUTPUT`) and stages it in a directory that varies, so {@link bundle} writes the source map's
 * `sources` as paths from the project root (`functions/health.ts`, `lib/...`, `node_modules/...`), never from the
 * output directory. In Lambda they resolve beside the map (`/var/task/functions/health.ts`): that is the path
 * `--enable-source-maps` prints in a stack trace.
 */
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type BuildOptions, type BuildResult, type OutputFile, type Plugin } from 'esbuild';

/** The project's root directory: where builds run from, and what source map paths are relative to. */
export const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));

export const BUNDLING = {
  format: 'esm',
  /** Must match the functions' runtime (Runtime.NODEJS_22_X). */
  target: 'node22',
  platform: 'node',
  mainFields: ['module', 'main'],
  minify: true,
  /**
   * A separate `index.mjs.map` beside the bundle, linked by a `//# sourceMappingURL` comment (esbuild's
   * `linked`): `--enable-source-maps` finds it, the code stays small.
   */
  sourcemap: 'linked',
  /** CommonJS dependencies bundled into an ES module still call require(). */
  banner: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  /**
   * The Node 22 Lambda runtime provides the AWS SDK v3 (its own release, not package-lock's: see "Function
   * bundles" in docs/deploy.md). Bundled, it would add 350–400 KB to every function, all of them over 500 KB.
   */
  external: ['@aws-sdk/*'],
} as const;

/**
 * The `@aws-sdk/*` packages a bundle may import, left external: those of the AWS SDK v3 the Lambda runtime ships
 * (its clients, `lib-dynamodb`, the `util-*` helpers). The tests resolve external imports from node_modules, so a
 * package the runtime lacks would fail only in AWS. `test/unit/build/bundle-aws-sdk.test.ts` holds the code's imports to
 * this, `npm run bundle-report` the bundles' (its dependencies' included).
 */
export const RUNTIME_SDK_PACKAGE = /^@aws-sdk\/(?:client|lib|util)-[a-z0-9-]+$/;

/**
 * The Stripe API resources bundled for real; every other module under `stripe/esm/resources/` is a stub that
 * throws when used (see the top of this file). The service calls only `paymentIntents.create` and
 * `paymentIntents.retrieve` (`lib/processor/stripe.ts`); `Stripe.webhooks.signature` and `Stripe.errors`
 * belong to the SDK's core, not to a resource, and the core itself only constructs the other resources.
 * Names are paths under `node_modules/stripe/esm/resources/` without `.js`; a nested one (`Issuing/Cards`)
 * keeps the namespaces above it (`Issuing`) too.
 */
export const STRIPE_RESOURCES: readonly string[] = ['PaymentIntents'];

/** Where a module of Stripe's resources is: `.../node_modules/stripe/esm/resources/<name>.js`. */
const STRIPE_RESOURCE_MODULE = /[\\/]node_modules[\\/]stripe[\\/]esm[\\/]resources[\\/](.+)\.js$/;
/** The stubs' shared module (virtual: the plugin serves it). */
const NOT_BUNDLED_MODULE = 'virtual:stripe-not-bundled';

/**
 * The stubs' class factory: constructing one gives a Proxy that throws on any use (reading, writing, `in`,
 * listing its keys). Only reflection that bypasses proxies (Node's `util.inspect`) sees its target.
 */
const NOT_BUNDLED_SOURCE = `
export function notBundled(resource) {
  const refuse = (_target, key) => {
    const use = typeof key === 'string' ? \` (used: \${key})\` : '';
    throw new Error(\`Stripe resource \${resource} is not bundled in this function: add it to STRIPE_RESOURCES in infra/build/bundling.ts\${use}\`);
  };
  const handler = { get: refuse, set: refuse, has: refuse, deleteProperty: refuse, defineProperty: refuse, ownKeys: refuse, getOwnPropertyDescriptor: refuse };
  return class NotBundledStripeResource {
    constructor() {
      return new Proxy({ notBundledStripeResource: resource }, handler);
    }
  };
}
`;

/**
 * The names a module of Stripe's resources exports (they are generated: `export class X`, or `export {}` for
 * types only). Any other form of export fails the build, so a change in a new SDK version is never stubbed wrong.
 */
function exportedNames(path: string, source: string): string[] {
  const names: string[] = [];
  for (const [statement] of source.matchAll(/^export\b.*$/gm)) {
    const declared = /^export\s+(?:class|function|const|let|var)\s+([\w$]+)/.exec(statement);
    const listed = /^export\s*\{([^}]*)\}\s*;?\s*$/.exec(statement);
    if (declared !== null) names.push(declared[1]!);
    else if (listed !== null) names.push(...listed[1]!.split(',').map((item) => item.trim().split(/\s+as\s+/).at(-1)!).filter((name) => name !== ''));
    else throw new Error(`trim-stripe: cannot stub ${path}: unexpected export \`${statement}\``);
  }
  return names;
}

/** The resource a module is, by its path under `resources/`: `Issuing/Cards.js` is `Issuing/Cards`, `Issuing/index.js` is `Issuing`. */
const resourceName = (relativePath: string) => relativePath.replace(/\\/g, '/').replace(/\/index$/, '');

/**
 * The modules under `stripe/esm/resources/` that `resources` keeps real: each one named, and the namespaces that
 * construct a nested one (`Issuing/Cards` keeps `Issuing`, its `index.js`).
 */
export function keptStripeModules(resources: readonly string[]): ReadonlySet<string> {
  return new Set(resources.flatMap((name) => name.split('/').map((_, i, parts) => parts.slice(0, i + 1).join('/'))));
}

/**
 * esbuild's plugin that stubs out the Stripe resources `resources` does not name (default {@link STRIPE_RESOURCES}).
 * Nothing at load touches a stub: the SDK's constructor only constructs them (and copies `accounts` to `account`),
 * and `stripe/esm/resources.js` (the `Stripe.resources` table, left as it is: about 4 KB) only records their
 * classes, its `resourceNamespace(...)` entries constructing them when called, never at load.
 */
export function trimStripe(resources: readonly string[] = STRIPE_RESOURCES): Plugin {
  const kept = keptStripeModules(resources);
  return {
    name: 'trim-stripe',
    setup(build) {
      build.onStart(async () => {
        const sdk = await build.resolve('stripe', { kind: 'import-statement', resolveDir: fileURLToPath(new URL('.', import.meta.url)) });
        if (sdk.errors.length > 0) return { errors: sdk.errors };
        const dir = join(dirname(sdk.path), 'resources');
        const unknown = resources.filter((name) => !existsSync(join(dir, `${name}.js`)) && !existsSync(join(dir, name, 'index.js')));
        return { errors: unknown.map((name) => ({ text: `STRIPE_RESOURCES names ${name}, which is no module under ${dir}` })) };
      });
      build.onResolve({ filter: new RegExp(`^${NOT_BUNDLED_MODULE}$`) }, () => ({ path: NOT_BUNDLED_MODULE, namespace: 'trim-stripe' }));
      build.onLoad({ filter: /.*/, namespace: 'trim-stripe' }, () => ({ contents: NOT_BUNDLED_SOURCE, loader: 'js' }));
      build.onLoad({ filter: STRIPE_RESOURCE_MODULE }, async ({ path }) => {
        const resource = resourceName(STRIPE_RESOURCE_MODULE.exec(path)![1]!);
        if (kept.has(resource)) return undefined;
        const names = exportedNames(path, await readFile(path, 'utf8'));
        const stubs = names.map((name) => `export const ${name} = /* @__PURE__ */ notBundled(${JSON.stringify(resource)});`);
        return { contents: [`import { notBundled } from '${NOT_BUNDLED_MODULE}';`, ...stubs].join('\n'), loader: 'js' };
      });
    },
  };
}

/**
 * The esbuild options every function is bundled with (`entry` to `outfile`, its map beside it), plus a metafile.
 * Nothing is written (`write: false`): build them with {@link bundle}, which writes the output.
 */
export function esbuildOptions(entry: string, outfile: string): BuildOptions {
  return {
    entryPoints: [entry],
    outfile,
    /** Metafile paths from the project root (`lib/...`), whatever directory the build is started from. */
    absWorkingDir: PROJECT_ROOT,
    write: false,
    bundle: true,
    treeShaking: true,
    format: BUNDLING.format,
    target: BUNDLING.target,
    platform: BUNDLING.platform,
    mainFields: [...BUNDLING.mainFields],
    minify: BUNDLING.minify,
    sourcemap: BUNDLING.sourcemap,
    banner: { js: BUNDLING.banner },
    external: [...BUNDLING.external],
    plugins: [trimStripe()],
    metafile: true,
    logLevel: 'warning',
  };
}

/** A source of another esbuild namespace than files (`trim-stripe:virtual:stripe-not-bundled`): no path to rewrite. */
const NAMESPACED_SOURCE = /^[a-z][\w-]*:/i;

/**
 * A source map with its `sources` relative to the project root instead of to the map's directory (esbuild's),
 * so that it reads the same wherever it is written.
 */
function rootRelativeSourceMap(map: OutputFile): string {
  const parsed = JSON.parse(map.text) as { sources: string[] };
  parsed.sources = parsed.sources.map((source) =>
    NAMESPACED_SOURCE.test(source) ? source : relative(PROJECT_ROOT, resolve(dirname(map.path), source)).split(sep).join('/'),
  );
  return JSON.stringify(parsed);
}

/**
 * Builds `options` (made by {@link esbuildOptions}) and writes the output, the source map's `sources` relative to
 * the project root: the same code gives the same bytes in any directory (see the top of this file).
 */
export async function bundle(options: BuildOptions): Promise<BuildResult> {
  const result = await build({ ...options, write: false });
  for (const file of result.outputFiles!) {
    mkdirSync(dirname(file.path), { recursive: true });
    writeFileSync(file.path, file.path.endsWith('.map') ? rootRelativeSourceMap(file) : file.contents);
  }
  return result;
}

export const FUNCTIONS_DIR = join(PROJECT_ROOT, 'functions');

/**
 * Bundles `functions/<name>.ts` into `outDir` as `index.mjs` and `index.mjs.map` (Lambda's handler `index.handler`),
 * byte for byte the same whatever `outDir` is.
 */
export async function buildFunction(name: string, outDir: string): Promise<{ outfile: string; result: BuildResult }> {
  const outfile = join(outDir, 'index.mjs');
  const result = await bundle(esbuildOptions(join(FUNCTIONS_DIR, `${name}.ts`), outfile));
  for (const [file, from] of Object.entries(FUNCTION_FILES[name] ?? {})) copyFileSync(join(PROJECT_ROOT, from), join(outDir, file));
  return { outfile, result };
}

/**
 * Files a function reads at run time beside its bundle, by function: name in the bundle's directory -> source
 * path from the project root. Not code, so not bundled (nor counted in the bundle's size).
 */
export const FUNCTION_FILES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  // The API reference page's script (functions/api-docs-script.ts: SCRIPT_FILE), 3.7 MB; and the viewer's
  // package.json (lib/http/docs-viewer.ts: SCALAR_PACKAGE_FILE), whose version names the script's URL: both
  // documentation functions read it (no `@scalar/api-reference` package to fall back on in Lambda).
  'api-docs-script': {
    'scalar-standalone.js': 'node_modules/@scalar/api-reference/dist/browser/standalone.js',
    'scalar-package.json': 'node_modules/@scalar/api-reference/package.json',
  },
  'api-docs': { 'scalar-package.json': 'node_modules/@scalar/api-reference/package.json' },
  // The OpenAPI document (functions/openapi-document.ts), 400 KB and growing with the docs.
  'openapi-document': { 'openapi.json': 'docs/openapi.json' },
};
