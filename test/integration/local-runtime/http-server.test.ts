/** The local servers' shared shutdown (infra/local/http-server.ts), on real loopback sockets. */
import { describe, expect, it } from '@jest/globals';
import { createServer, request, Agent, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeGracefully, listen } from '../../../infra/local/http-server';

/** A server like the local API: keep-alive on, answering each request after `delayMs` (from its path). */
async function slowServer(): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    const delayMs = Number(req.url?.slice(1) ?? 0);
    setTimeout(() => res.writeHead(201, { 'content-type': 'application/json' }).end('{"written":true}'), delayMs);
  });
  server.keepAliveTimeout = 5_000;
  await listen(server, 0, '127.0.0.1');
  return { server, port: (server.address() as AddressInfo).port };
}

/** One request over a keep-alive agent (so the connection stays open afterwards, as a real client's would). */
function get(port: number, path: string, agent: Agent): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('closeGracefully', () => {
  it('lets an in-flight request finish and answer, then closes its keep-alive connection at once', async () => {
    // Arrange
    const { server, port } = await slowServer();
    const agent = new Agent({ keepAlive: true });
    const inFlight = get(port, '/300', agent);
    await new Promise((resolve) => setTimeout(resolve, 50));

    // Act
    const startedAt = Date.now();
    await closeGracefully(server, { graceMs: 10_000 });
    const closedAfterMs = Date.now() - startedAt;

    // Assert: answered in full; closed soon after the answer, not after the 5 s keep-alive timeout
    await expect(inFlight).resolves.toEqual({ status: 201, body: '{"written":true}' });
    expect(closedAfterMs).toBeGreaterThanOrEqual(200);
    expect(closedAfterMs).toBeLessThan(1_500);
    agent.destroy();
  });

  it('closes idle keep-alive connections straight away, and accepts no new connection', async () => {
    const { server, port } = await slowServer();
    const agent = new Agent({ keepAlive: true });
    await get(port, '/0', agent);

    const startedAt = Date.now();
    const closing = closeGracefully(server, { graceMs: 10_000 });
    const refused = get(port, '/0', new Agent());
    await closing;

    expect(Date.now() - startedAt).toBeLessThan(1_000);
    await expect(refused).rejects.toThrow();
    agent.destroy();
  });

  it('cuts a request that outlives the grace period, so stopping stays bounded', async () => {
    const { server, port } = await slowServer();
    const agent = new Agent({ keepAlive: true });
    const tooSlow = get(port, '/2000', agent);
    await new Promise((resolve) => setTimeout(resolve, 50));

    const startedAt = Date.now();
    await closeGracefully(server, { graceMs: 300 });

    expect(Date.now() - startedAt).toBeLessThan(1_500);
    await expect(tooSlow).rejects.toThrow();
    agent.destroy();
  });
});
