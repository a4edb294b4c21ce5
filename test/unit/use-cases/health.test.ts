import { describe, expect, it } from '@jest/globals';
import { createServer } from 'node:http';
import { createHandler } from '../../../functions/health';
import { processorCheck } from '../../../lib/processor/health';
import { checkHealth } from '../../../lib/use-cases/health';
import { httpEvent, lambdaContext } from '../../support/events';
import { freePort } from '../../support/ports';

const passes = async () => undefined;
const fails = async () => {
  throw new Error('connect ECONNREFUSED 127.0.0.1:8000');
};
/** A dependency that never answers (but stops when told to). */
const hangs = (aborted: AbortSignal[]) => (signal: AbortSignal) =>
  new Promise<void>((_, reject) => {
    aborted.push(signal);
    signal.addEventListener('abort', () => reject(signal.reason));
  });

describe('checkHealth', () => {
  it('is ok when every check passes', async () => {
    expect(await checkHealth({ dynamodb: passes, processor: passes })).toEqual({ status: 'ok', checks: { dynamodb: 'ok', processor: 'ok' } });
  });

  it('is unavailable and names the failing check', async () => {
    expect(await checkHealth({ dynamodb: fails, processor: passes })).toEqual({
      status: 'unavailable',
      checks: { dynamodb: 'fail', processor: 'ok' },
    });
  });

  it('bounds a check that hangs by the timeout, counts it as failed, and tells it to stop', async () => {
    const signals: AbortSignal[] = [];
    const startedAt = Date.now();

    const report = await checkHealth({ dynamodb: hangs(signals), processor: passes }, { timeoutMs: 100 });

    expect(Date.now() - startedAt).toBeLessThan(1_000);
    expect(report).toEqual({ status: 'unavailable', checks: { dynamodb: 'fail', processor: 'ok' } });
    expect(signals[0]?.aborted).toBe(true);
  });
});

describe('GET /health', () => {
  it('answers 200 with the report while every dependency answers', async () => {
    const response = await createHandler({ dynamodb: passes, processor: passes })(httpEvent({ path: '/api/v1/health' }), lambdaContext());

    expect(response.statusCode).toBe(200);
    expect(response.headers?.['cache-control']).toBe('no-store');
    expect(JSON.parse(response.body ?? '')).toEqual({ status: 'ok', checks: { dynamodb: 'ok', processor: 'ok' } });
  });

  it('answers 503 naming the failing dependency', async () => {
    const response = await createHandler({ dynamodb: passes, processor: fails })(httpEvent({ path: '/api/v1/health' }), lambdaContext());

    expect(response.statusCode).toBe(503);
    expect(JSON.parse(response.body ?? '')).toEqual({ status: 'unavailable', checks: { dynamodb: 'ok', processor: 'fail' } });
  });
});

describe('the processor check', () => {
  const keys = { secretKey: 'sk_test_x', publishableKey: 'pk_test_x', webhookSecret: 'whsec_x' };
  const signal = () => AbortSignal.timeout(1_000);

  it.each(['secretKey', 'publishableKey'] as const)('fails when the %s is not configured (a checkout would answer 500)', async (missing) => {
    const check = processorCheck({ apiBase: 'http://127.0.0.1:1', loadKeys: async () => ({ ...keys, [missing]: undefined }) });

    await expect(check(signal())).rejects.toThrow(/not configured/);
  });

  it('without a key loader (AWS: the public function reads no secret) checks only that the API answers', async () => {
    const api = createServer((_req, res) => res.writeHead(401).end());
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    const port = (api.address() as { port: number }).port;
    try {
      await expect(processorCheck({ apiBase: `http://127.0.0.1:${port}` })(signal())).resolves.toBeUndefined();
    } finally {
      await new Promise((resolve) => api.close(resolve));
    }
  });

  it('locally passes when the sandbox answers HTTP at all, and fails when nothing listens', async () => {
    const sandbox = createServer((_req, res) => res.writeHead(404).end());
    await new Promise<void>((resolve) => sandbox.listen(0, '127.0.0.1', resolve));
    const port = (sandbox.address() as { port: number }).port;
    try {
      await expect(processorCheck({ apiBase: `http://127.0.0.1:${port}`, loadKeys: async () => keys })(signal())).resolves.toBeUndefined();
    } finally {
      await new Promise((resolve) => sandbox.close(resolve));
    }

    await expect(processorCheck({ apiBase: `http://127.0.0.1:${await freePort()}`, loadKeys: async () => keys })(signal())).rejects.toThrow();
  });
});
