/** Small pieces the local HTTP servers (the API, the sandbox processor) share. */
import type { IncomingMessage, Server } from 'node:http';

/** Reads a request body, up to `maxBytes` (beyond it the rest is drained and `'too-large'` returned). */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer | 'too-large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
    });
    req.on('end', () => resolve(size > maxBytes ? 'too-large' : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** `server.listen` as a promise that rejects when the port cannot be bound. */
export function listen(server: Server, port: number, host: string | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** How often a closing server looks for connections that have just finished their last request. */
const IDLE_SWEEP_MS = 50;

/**
 * Stops a server without losing answers: it stops accepting at once, lets requests already running finish
 * and be answered (a client whose request wrote a transaction must get its 201), closes each keep-alive
 * connection as soon as it falls idle (rather than after the keep-alive timeout), and after `graceMs` cuts
 * whatever is still open, so stopping stays bounded. Resolves once every connection is closed.
 *
 * Node's own `server.close()` waits out the keep-alive timeout of connections that were busy when it was
 * called; `closeAllConnections()` resets requests mid-flight. This is the path between the two.
 */
export function closeGracefully(server: Server, options: { graceMs: number }): Promise<void> {
  return new Promise((resolve, reject) => {
    const idleSweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
    const deadline = setTimeout(() => server.closeAllConnections(), options.graceMs);
    server.close((error) => {
      clearInterval(idleSweep);
      clearTimeout(deadline);
      if (error === undefined) resolve();
      else reject(error);
    });
  });
}
