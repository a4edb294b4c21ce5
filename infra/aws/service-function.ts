/**
 * One Lambda function of the service, built the same way wherever a stack needs one: `functions/<name>.ts`
 * bundled by esbuild as an ES module for Node 22 on ARM, X-Ray tracing, a log group kept a month, and the
 * runtime settings every function shares (`SVC_RUNTIME=aws`, source maps). The bundling settings are
 * `../bundling.ts`'s, shared with `npm run bundle-report`. Grants are the caller's business.
 */
import { fileURLToPath } from 'node:url';
import { Duration } from 'aws-cdk-lib';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { cdkBundling } from '../bundling';

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
const entryOf = (name: string) => fileURLToPath(new URL(`../../functions/${name}.ts`, import.meta.url));

export interface ServiceFunctionProps {
  /** Added to `SVC_RUNTIME` and `NODE_OPTIONS`. */
  environment: Record<string, string>;
  timeoutSeconds: number;
  memorySize?: number;
  /** Reserved (and so also the most) concurrent executions; unset, the account's unreserved pool. */
  reservedConcurrentExecutions?: number;
}

/** `functions/<name>.ts` as the construct `Fn-<name>` (its log group `Logs-<name>`). */
export function serviceFunction(scope: Construct, name: string, props: ServiceFunctionProps): NodejsFunction {
  return new NodejsFunction(scope, `Fn-${name}`, {
    entry: entryOf(name),
    handler: 'handler',
    projectRoot,
    depsLockFilePath: `${projectRoot}/package-lock.json`,
    runtime: Runtime.NODEJS_22_X,
    architecture: Architecture.ARM_64,
    memorySize: props.memorySize ?? 512,
    reservedConcurrentExecutions: props.reservedConcurrentExecutions,
    timeout: Duration.seconds(props.timeoutSeconds),
    tracing: Tracing.ACTIVE,
    logGroup: new LogGroup(scope, `Logs-${name}`, { retention: RetentionDays.ONE_MONTH }),
    environment: { SVC_RUNTIME: 'aws', ...props.environment, NODE_OPTIONS: '--enable-source-maps' },
    bundling: cdkBundling,
  });
}
