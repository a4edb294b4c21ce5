/**
 * A middleware that answers early (an idempotent replay, a CORS preflight) ends the chain before any `after`
 * step runs: the chain must still do what the Powertools `after` steps would have done, so the logger's request
 * keys do not reach the next request's lines and the invocation's metrics are flushed with it.
 *
 * Run as in AWS (metrics on), against this run's DynamoDB Local through the SDK's standard endpoint variable;
 * KMS is stood in for by a pass-through secret box.
 */
import { describe, expect, it, jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { httpEvent, lambdaContext } from '../../support/events';

Object.assign(process.env, {
  SVC_RUNTIME: 'aws',
  AWS_REGION: 'local',
  KMS_KEY_ID: 'alias/test',
  LOG_LEVEL: 'INFO',
  AWS_ENDPOINT_URL_DYNAMODB: process.env.DYNAMODB_ENDPOINT,
  AWS_ACCESS_KEY_ID: 'local',
  AWS_SECRET_ACCESS_KEY: 'local',
});
for (const name of ['DYNAMODB_ENDPOINT', 'POWERTOOLS_METRICS_DISABLED']) delete process.env[name];
const { signBody } = await import('../../../lib/auth/credentials');
const { httpRoute } = await import('../../../lib/composition/http-route');
const { logger, metrics } = await import('../../../lib/observability');
const { secretBox } = await import('../../../lib/secrets');
const { createPartner, issueApiKey } = await import('../../../lib/use-cases/partners');
const { partnerDeps } = await import('../../../lib/composition/partners');
const { handler: brandingPacket } = await import('../../../functions/branding-packet');

jest.spyOn(secretBox, 'seal').mockImplementation(async (plaintext) => ({ v: 1, kek: 'test', edk: '', iv: '', tag: '', ct: plaintext }));
jest.spyOn(secretBox, 'open').mockImplementation(async (sealed) => sealed.ct);

/** What one invocation wrote to stdout (log lines and embedded-metric-format lines), parsed. */
async function captured<T>(invoke: () => Promise<T>): Promise<{ result: T; lines: Array<Record<string, unknown>> }> {
  const chunks: string[] = [];
  const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    chunks.push(String(chunk));
    return true;
  });
  try {
    const result = await invoke();
    return { result, lines: chunks.join('').split('\n').filter((line) => line.trim().startsWith('{')).map((line) => JSON.parse(line)) };
  } finally {
    write.mockRestore();
  }
}

const logLines = (lines: Array<Record<string, unknown>>) => lines.filter((line) => 'message' in line);

const metricNames = (lines: Array<Record<string, unknown>>) =>
  lines
    .filter((line) => '_aws' in line)
    .flatMap((line) => (line._aws as { CloudWatchMetrics: Array<{ Metrics: Array<{ Name: string }> }> }).CloudWatchMetrics)
    .flatMap((group) => group.Metrics.map((metric) => metric.Name));

describe('a chain that answers early', () => {
  it('leaves no partner keys in the next request’s log lines and flushes the metrics of an idempotent replay', async () => {
    // Arrange: a partner mutation that completed once
    const partner = await createPartner(partnerDeps, {
      name: 'Early answers',
      serviceFeePercentage: 1.5,
      status: 'active',
      kycStatus: 'approved',
      rateLimitPerMinute: null,
      branding: null,
    });
    const key = await issueApiKey(partnerDeps, 'partner', partner.partnerId);
    const route = httpRoute({ access: 'partner-mutation', partnerOnly: true }, async () => ({ status: 201, body: { ok: true } }));
    const idempotencyKey = randomUUID();
    const signed = () =>
      httpEvent({
        method: 'POST',
        path: '/api/v1/test/early',
        body: '{}',
        headers: { 'x-api-key': key.apiKey, 'x-svc-hmac': signBody(key.hmacSecret, '{}'), 'idempotency-key': idempotencyKey },
      });
    expect((await route(signed(), lambdaContext())).statusCode).toBe(201);

    // Act: the replay, then a request without credentials on the same handler
    const replay = await captured(() => route(signed(), lambdaContext()));
    const unrelated = await captured(() => route(httpEvent({ method: 'POST', path: '/api/v1/test/early', body: '{}' }), lambdaContext()));

    // Assert
    expect(replay.result.headers?.['Idempotent-Replayed']).toBe('true');
    expect(metricNames(replay.lines)).toContain('IdempotentReplays');
    expect(unrelated.result.statusCode).toBe(401);
    expect(logLines(unrelated.lines).length).toBeGreaterThan(0);
    for (const line of logLines(unrelated.lines)) {
      expect(line).not.toHaveProperty('key_id');
      expect(line).not.toHaveProperty('partner_id');
    }
    expect(metricNames(unrelated.lines)).not.toContain('IdempotentReplays');
  });

  it('resets the logger and flushes metrics after answering a CORS preflight of the branding packet', async () => {
    const flush = jest.spyOn(metrics, 'publishStoredMetrics');
    const preflight = httpEvent({ method: 'OPTIONS', path: '/api/v1/branding/packet' });

    const answered = await captured(() => brandingPacket({ ...preflight, requestContext: { ...preflight.requestContext, requestId: 'req-preflight' } }, lambdaContext()));
    const afterwards = await captured(async () => logger.info('between invocations'));

    expect(answered.result.statusCode).toBe(204);
    expect(flush).toHaveBeenCalledTimes(1);
    expect(logLines(afterwards.lines)).toHaveLength(1);
    expect(logLines(afterwards.lines)[0]).not.toHaveProperty('request_id');
    expect(logLines(afterwards.lines)[0]).not.toHaveProperty('route');
  });
});
