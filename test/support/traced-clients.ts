/**
 * Run as its own process by `test/unit/config-and-clients/tracing.test.ts`, with a Lambda environment: loads the modules that create
 * the service's AWS SDK clients and prints, as one JSON line, which clients went through the tracer, whether the
 * DynamoDB client carries X-Ray's instrumentation, and whether Node's `https` (the Stripe SDK's transport) was
 * patched. A process of its own, because the patch is global and would reach every test of a jest worker.
 */
import https from 'node:https';
import { Tracer } from '@aws-lambda-powertools/tracer';

const originalRequest = https.request;
const traced: string[] = [];
const capture = Tracer.prototype.captureAWSv3Client;
Tracer.prototype.captureAWSv3Client = function <T>(this: Tracer, client: T): T {
  traced.push((client as object).constructor.name);
  return capture.call(this, client) as T;
};

const { dynamoClient } = await import('../../lib/store/dynamo');
await import('../../lib/webhooks/sqs-queue');
await import('../../lib/secrets/index');
await import('../../lib/payouts/index');
await import('../../lib/processor/process-keys');

console.log(
  JSON.stringify({
    traced: traced.sort(),
    dynamoInstrumented: dynamoClient.middlewareStack.identify().some((name) => name.includes('XRaySDKInstrumentation')),
    httpsPatched: https.request !== originalRequest,
  }),
);
