/**
 * No log line may carry an API key, an HMAC secret or an Authorization value: a full partner request, an
 * admin request and a rejected one are run with DEBUG logging while stdout is captured.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { TestApi } from '../../support/api';

// The log level is configuration, read once when the service's modules load: load them after setting it.
const previousLevel = process.env.LOG_LEVEL;
process.env.LOG_LEVEL = 'DEBUG';
const { sign, TestApi: Api } = await import('../../support/api');
process.env.LOG_LEVEL = previousLevel;

let api: TestApi;
beforeAll(async () => {
  api = await Api.start();
});
afterAll(() => api.close());

describe('logs', () => {
  it('never contain credentials, at DEBUG level, for successful and rejected requests', async () => {
    // Arrange: credentials made before capturing, used while capturing
    const partner = await api.createPartner();
    await api.read(partner, '/clients'); // load (cold start) the handlers before capturing
    const lines: string[] = [];
    const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    const errorWrite = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });

    // Act
    let created;
    let rejected;
    let issued;
    let endpoint;
    try {
      created = await api.signed(partner, '/clients', { client_id: `m-${randomUUID()}`, legal_name: 'Logged Ltd' });
      await api.read(partner, '/clients');
      rejected = await api.signed(partner, '/clients', { client_id: `m-${randomUUID()}`, legal_name: 'Bad Sig Ltd' }, {
        headers: { 'x-svc-hmac': sign('svc_hmac_wrong', '{}') },
      });
      issued = await api.admin('POST', `/admin/partners/${partner.partnerId}/api-keys`, { scope: 'partner' });
      endpoint = await api.admin('POST', `/admin/partners/${partner.partnerId}/webhook-endpoints`, {
        name: 'Logged',
        url: 'http://127.0.0.1:9/hook',
        events: ['transaction_succeeded'],
      });
    } finally {
      write.mockRestore();
      errorWrite.mockRestore();
    }

    // Assert: the requests ran and were logged, with their request ids, and nothing secret
    expect(created.status).toBe(201);
    expect(rejected.status).toBe(401);
    expect(issued.status).toBe(201);
    expect(endpoint.status).toBe(201);
    const output = lines.join('');
    expect(lines.length).toBeGreaterThan(4);
    expect(output).toContain('"request_id"');
    expect(output).toContain('[redacted]');
    for (const secret of [partner.apiKey, partner.hmacSecret, api.adminToken, issued.body.api_key, issued.body.hmac_secret, endpoint.body.secret]) {
      expect(output).not.toContain(secret);
    }
    expect(output).not.toMatch(/svc_(partner|platform|hmac)_[A-Za-z0-9_-]{20}/);
    expect(output).not.toMatch(/Bearer\s+ey/);
    expect(output).not.toMatch(/whsec_[A-Za-z0-9+/]{20}/);
  });
});
