/**
 * One Lambda function of the service, built the same way wherever a stack needs one: `functions/<name>.ts`
 * bundled as an ES module for Node 22 on ARM, X-Ray tracing, a log group kept a month, and the settings every
 * function shares (`SVC_RUNTIME=aws`, Powertools' service name and log level, source maps). Grants are the
 * caller's business.
 *
 * The code is bundled by `../build/build-function.ts` with `../build/bundling.ts`'s esbuild options (the ones `npm run
 * bundle-report` measures), whose plugin keeps only Stripe's core and the resources in `STRIPE_RESOURCES`: a
 * plugin the esbuild CLI that NodejsFunction runs cannot take. So the asset is staged as NodejsFunction stages
 * its own: `Code.fromAsset` of the project with local bundling and the hash of the output, offline, no Docker.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AssetHashType, DockerImage, Duration, type ILocalBundling } from 'aws-cdk-lib';
import { Architecture, Code, Function, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { powertoolsEnvironment } from './observability';

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));

export interface ServiceFunctionProps {
  /** Added to `SVC_RUNTIME`, Powertools' settings and `NODE_OPTIONS`. */
  environment: Record<string, string>;
  timeoutSeconds: number;
  memorySize?: number;
  /** Reserved (and so also the most) concurrent executions; unset, the account's unreserved pool. */
  reservedConcurrentExecutions?: number;
}

/**
 * Bundles `functions/<name>.ts` into the asset's output directory (`index.mjs`, `index.mjs.map`), in a Node
 * process of its own: the CDK calls `tryBundle` synchronously. The function's name is a field so that each
 * asset's bundling options, which the CDK caches assets by, differ.
 */
class LocalFunctionBuild implements ILocalBundling {
  constructor(readonly functionName: string) {}

  tryBundle(outputDir: string): boolean {
    const cached = prebuiltBundle(this.functionName);
    if (cached !== undefined) {
      cpSync(cached, outputDir, { recursive: true });
      return true;
    }
    const build = spawnSync(process.execPath, ['--import', 'tsx', 'infra/build/build-function.ts', this.functionName, outputDir], {
      cwd: projectRoot,
      stdio: 'inherit',
    });
    if (build.status !== 0) throw new Error(`bundling functions/${this.functionName}.ts failed (${build.error?.message ?? `exit ${build.status ?? build.signal}`})`);
    return true;
  }
}

/**
 * The bundle of `name` built already from exactly this source, if `FUNCTION_BUNDLE_CACHE_DIR` names a directory of
 * them (the infra tests' global setup builds every function once, into a directory named by the hash of the
 * source the bundles come from, and their many synths copy from it). Unset, as in any real synth: `undefined`.
 */
function prebuiltBundle(name: string): string | undefined {
  const dir = process.env.FUNCTION_BUNDLE_CACHE_DIR;
  if (dir === undefined || dir === '') return undefined;
  const bundle = join(dir, name);
  return existsSync(join(bundle, 'index.mjs')) ? bundle : undefined;
}

/** `functions/<name>.ts` as the construct `Fn-<name>` (its log group `Logs-<name>`). */
export function serviceFunction(scope: Construct, name: string, props: ServiceFunctionProps): Function {
  return new Function(scope, `Fn-${name}`, {
    code: Code.fromAsset(projectRoot, {
      assetHashType: AssetHashType.OUTPUT,
      bundling: {
        // Required by the CDK, never used: the local build always bundles, or fails the synth.
        image: DockerImage.fromRegistry('public.ecr.aws/sam/build-nodejs22.x'),
        local: new LocalFunctionBuild(name),
      },
    }),
    handler: 'index.handler',
    runtime: Runtime.NODEJS_22_X,
    architecture: Architecture.ARM_64,
    memorySize: props.memorySize ?? 512,
    reservedConcurrentExecutions: props.reservedConcurrentExecutions,
    timeout: Duration.seconds(props.timeoutSeconds),
    tracing: Tracing.ACTIVE,
    logGroup: new LogGroup(scope, `Logs-${name}`, { retention: RetentionDays.ONE_MONTH }),
    environment: { SVC_RUNTIME: 'aws', ...powertoolsEnvironment, ...props.environment, NODE_OPTIONS: '--enable-source-maps' },
  });
}
