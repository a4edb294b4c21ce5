/**
 * How every `functions/<name>.ts` is bundled, defined once: the CDK stacks (`aws/service-function.ts`, through
 * NodejsFunction) and `npm run bundle-report` (esbuild directly) both derive their options from `BUNDLING`, so
 * the sizes the report prints are the sizes that deploy.
 */
import { OutputFormat, SourceMapMode, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { BuildOptions } from 'esbuild';

export const BUNDLING = {
  format: 'esm',
  /** Must match the functions' runtime (Runtime.NODEJS_22_X). */
  target: 'node22',
  platform: 'node',
  mainFields: ['module', 'main'],
  minify: true,
  /**
   * A separate `index.mjs.map` beside the bundle, linked by a `//# sourceMappingURL` comment (esbuild's
   * `linked`, NodejsFunction's SourceMapMode.DEFAULT): `--enable-source-maps` finds it, the code stays small.
   */
  sourcemap: 'linked',
  /** CommonJS dependencies bundled into an ES module still call require(). */
  banner: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  /** The Node 22 Lambda runtime provides the AWS SDK v3 (NodejsFunction's default externals, made explicit). */
  external: ['@aws-sdk/*'],
} as const;

/** NodejsFunction's `bundling` for `BUNDLING` (it always bundles with tree shaking and `--platform=node`). */
export const cdkBundling: BundlingOptions = {
  format: OutputFormat.ESM,
  target: BUNDLING.target,
  mainFields: [...BUNDLING.mainFields],
  minify: BUNDLING.minify,
  sourceMap: true,
  sourceMapMode: SourceMapMode.DEFAULT,
  banner: BUNDLING.banner,
  externalModules: [...BUNDLING.external],
};

/** The esbuild options NodejsFunction runs for `entry` (its `--bundle entry --outfile ...` command), plus a metafile. */
export function esbuildOptions(entry: string, outfile: string): BuildOptions {
  return {
    entryPoints: [entry],
    outfile,
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
    metafile: true,
    logLevel: 'warning',
  };
}
