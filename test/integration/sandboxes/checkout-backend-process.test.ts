/**
 * The sandbox checkout's backend process (infra/local/sandbox/checkout/backend-process.ts) is given the partner's
 * configuration and what a Node process needs, never the runtime's secrets: its environment, as the operating system
 * holds it (`/proc/<pid>/environ`, Linux), names none of them.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { type BackendProcess, startBackendProcess } from '../../../infra/local/sandbox/checkout/backend-process';
import { descendants } from '../../support/npm-start';

const started: BackendProcess[] = [];
afterAll(async () => {
  await Promise.all(started.map((backend) => backend.stop(5_000)));
});

/** The runtime's secrets, and a credential of Node's tooling, as the runtime's environment may hold them. */
const PARENT_SECRETS = {
  ADMIN_JWT_SECRET: 'admin-jwt-secret-of-the-runtime-0123456789',
  PROCESSOR_SECRET_KEY: 'sk_test_runtime',
  AWS_SECRET_ACCESS_KEY: 'aws-secret-of-the-runtime',
  AWS_ACCESS_KEY_ID: 'AKIARUNTIME',
  NODE_AUTH_TOKEN: 'npm-token-of-the-runtime',
  SANDBOX_TEST_UNLISTED: 'anything else of the runtime',
};

const environOf = (pid: number) =>
  Object.fromEntries(
    readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .filter((entry) => entry !== '')
      .map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]),
  ) as Record<string, string>;

describe('the sandbox checkout backend process', () => {
  (process.platform === 'linux' ? it : it.skip)("sees its settings, PATH and NODE_OPTIONS, and none of the runtime's secrets", async () => {
    // Arrange: the secrets in this process's environment, as in the runtime's
    const added = { ...PARENT_SECRETS, NODE_OPTIONS: '--no-deprecation' };
    const saved = { ...process.env };
    Object.assign(process.env, added);
    const settings = {
      serviceUrl: 'http://127.0.0.1:9/api/v1',
      apiKey: 'svc_partner_sandbox',
      hmacSecret: 'svc_hmac_sandbox',
      partnerId: 'ptr_sandbox',
      webhookSecret: `whsec_${Buffer.alloc(24, 7).toString('base64')}`,
      basePath: '/sandbox',
      products: [{ sku: 'mug', name: 'Mug', client_id: 'merchant-9', amount: 9.5, currency: 'EUR' }],
      processorJsUrl: 'http://127.0.0.1:12111/v3/',
    };

    // Act
    let backend: BackendProcess;
    try {
      backend = await startBackendProcess(settings, () => undefined);
    } finally {
      for (const name of Object.keys(added)) {
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      }
    }
    started.push(backend);
    const child = descendants(process.pid).find(({ args }) => args.includes('examples/partner-backend/src/main.ts'));
    const environ = environOf(child!.pid);

    // Assert
    expect(Object.keys(environ).filter((name) => name in PARENT_SECRETS)).toEqual([]);
    expect(environ).toMatchObject({ API_KEY: 'svc_partner_sandbox', HMAC_SECRET: 'svc_hmac_sandbox', PARTNER_ID: 'ptr_sandbox', BASE_PATH: '/sandbox', PORT: '0', PATH: saved.PATH, NODE_OPTIONS: '--no-deprecation' });
    expect((await fetch(`${backend.origin}/sandbox/products`)).status).toBe(200);
  });
});
