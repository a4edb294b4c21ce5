/**
 * Logger, tracer and metrics: created once per process (Lambda cold start), shared by every function.
 * Log lines are structured JSON (Powertools); the HTTP chain adds the request id to every line, the access steps
 * the partner id, and the use cases the `svc_tx_id` they act on.
 *
 * Traces (AWS, with the function's active tracing; off elsewhere): the HTTP chain opens a segment per
 * invocation, every AWS SDK client is created through {@link traced} (a subsegment per DynamoDB, KMS, SQS or
 * Secrets Manager call), and the tracer patches Node's `http`/`https` (`captureHTTPsRequests`), which the
 * Stripe SDK calls through, so each processor call is a subsegment too. `fetch` (the payout rails) is traced
 * by Powertools through Node's diagnostics channel.
 *
 * Metrics are CloudWatch embedded-metric-format lines, flushed at the end of each invocation, in AWS only:
 * locally they would only add noise to `npm start`'s output.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { Tracer } from '@aws-lambda-powertools/tracer';
import { config } from './config';
import { METRICS_NAMESPACE } from './metrics-namespace';

export { METRICS_NAMESPACE };

export const logger = new Logger({ serviceName: config.SERVICE_NAME, logLevel: config.LOG_LEVEL });
export const tracer = new Tracer({ serviceName: config.SERVICE_NAME, captureHTTPsRequests: true });
export const metrics = new Metrics({ serviceName: config.SERVICE_NAME, namespace: METRICS_NAMESPACE });

/** `client` with X-Ray instrumentation of its calls when tracing is on (in Lambda); `client` itself otherwise. */
export const traced = <Client>(client: Client): Client => tracer.captureAWSv3Client(client);

const metricsEnabled = config.SVC_RUNTIME === 'aws';

/** Counts occurrences of a business or error event (no-op locally). */
export function countMetric(name: string, count = 1): void {
  if (metricsEnabled) metrics.addMetric(name, MetricUnit.Count, count);
}

/** Records a duration or an age, in seconds (no-op locally). */
export function secondsMetric(name: string, seconds: number): void {
  if (metricsEnabled) metrics.addMetric(name, MetricUnit.Seconds, seconds);
}

/** The chain's metrics step: flush per invocation, cold starts counted (AWS only). */
export const metricsMiddleware = () => (metricsEnabled ? [logMetrics(metrics, { captureColdStartMetric: true })] : []);
