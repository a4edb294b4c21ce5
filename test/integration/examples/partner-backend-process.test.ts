/**
 * The example partner backend run as `npm start` runs it behind `/sandbox`: its own process, configured by its
 * environment (`BASE_PATH`, `PRODUCTS`, `PORT=0`), forked with an IPC channel by a supervisor it reports its
 * address to. When the supervisor is killed outright (SIGKILL: no handler runs), the backend must exit by itself,
 * or it would hold its port and answer for a partner nobody runs.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { isAlive, waitFor } from '../../support/npm-start';

const MAIN = 'examples/partner-backend/src/main.ts';
/** A secret of the Standard Webhooks shape (`whsec_` and base64): the backend checks it when it starts. */
const WEBHOOK_SECRET = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;

/** Forks the backend as a supervisor does and prints its pid and address, then waits (to be killed). */
const SUPERVISOR = `
  const { fork } = require('node:child_process');
  const child = fork(${JSON.stringify(MAIN)}, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  child.on('message', (message) => console.log(JSON.stringify({ pid: child.pid, url: message.url })));
`;

const leftovers: number[] = [];
afterAll(() => {
  for (const pid of leftovers.filter(isAlive)) process.kill(pid, 'SIGKILL');
});

describe('the example partner backend under a supervisor', () => {
  it('reports where it listens, serves PRODUCTS under BASE_PATH, and exits by itself once its supervisor is killed with SIGKILL', async () => {
    // Arrange: a supervisor process, and the backend it forks on a free port
    const products = [{ sku: 'mug', name: 'Mug', client_id: 'merchant-9', amount: 9.5, currency: 'EUR' }];
    const supervisor = spawn(process.execPath, ['-e', SUPERVISOR], {
      env: { ...process.env, PORT: '0', BASE_PATH: '/shop', PRODUCTS: JSON.stringify(products), PARTNER_ID: 'ptr_x', API_KEY: 'svc_partner_x', HMAC_SECRET: 'svc_hmac_x', WEBHOOK_SECRET },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    leftovers.push(supervisor.pid!);
    const [line] = (await once(supervisor.stdout!, 'data')) as [Buffer];
    const { pid, url } = JSON.parse(line.toString()) as { pid: number; url: string };
    leftovers.push(pid);
    const listed = await fetch(`${url}/products`);
    const outsideBase = await fetch(`${new URL(url).origin}/products`);

    // Act
    supervisor.kill('SIGKILL');
    const exited = await waitFor(async () => (isAlive(pid) ? undefined : true), 10_000, 'the backend to exit after its supervisor was killed');

    // Assert
    expect(new URL(url).pathname).toBe('/shop');
    expect([listed.status, await listed.json()]).toEqual([200, { items: [{ sku: 'mug', name: 'Mug', amount: 9.5, currency: 'EUR' }] }]);
    expect(outsideBase.status).toBe(404);
    expect(exited).toBe(true);
  }, 30_000);
});
