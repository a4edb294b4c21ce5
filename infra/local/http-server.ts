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
