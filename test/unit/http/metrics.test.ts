/** In AWS the chain flushes CloudWatch embedded metrics per invocation; locally it emits none. */
import { describe, expect, it, jest } from '@jest/globals';
import { httpEvent, lambdaContext } from '../../support/events';

// The runtime is configuration, read once when the modules load: load them as AWS would run them.
Object.assign(process.env, { SVC_RUNTIME: 'aws', AWS_REGION: 'eu-west-1', TABLE_NAME: 'tbl', KMS_KEY_ID: 'alias/test', LOG_LEVEL: 'SILENT' });
for (const name of ['POWERTOOLS_METRICS_DISABLED', 'DYNAMODB_ENDPOINT', 'PROCESSOR_API_BASE']) delete process.env[name];
const { httpRoute } = await import('../../../lib/composition/http-route');
const { errors } = await import('../../../lib/domain/errors');

describe('metrics in AWS', () => {
  it('counts a rejected request as ClientErrors in an embedded-metric-format line', async () => {
    const lines: string[] = [];
    const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    const rejecting = httpRoute({ access: 'public' }, async () => {
      throw errors.txNotFound();
    });

    let response;
    try {
      response = await rejecting(httpEvent({}), lambdaContext());
    } finally {
      write.mockRestore();
    }

    expect(response.statusCode).toBe(404);
    const emf = lines.map((line) => line.trim()).filter((line) => line.includes('"_aws"')).map((line) => JSON.parse(line) as Record<string, unknown>);
    const metricNames = emf.flatMap((entry) =>
      ((entry._aws as { CloudWatchMetrics: Array<{ Namespace: string; Metrics: Array<{ Name: string }> }> }).CloudWatchMetrics).flatMap((group) =>
        group.Metrics.map((metric) => `${group.Namespace}/${metric.Name}`),
      ),
    );
    expect(metricNames).toContain('PartnerPayments/ClientErrors');
  });
});
